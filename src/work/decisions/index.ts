import { decisionLogTool } from "./log";
import { decisionQueryTool } from "./query";
import { decisionSetStatusTool } from "./status";

export const decisionTools = [decisionLogTool, decisionSetStatusTool, decisionQueryTool];
