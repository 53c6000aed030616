import { decisionLogTool, decisionQueryTool, decisionSetStatusTool } from "./model";

export const decisionTools = [decisionLogTool, decisionSetStatusTool, decisionQueryTool];
