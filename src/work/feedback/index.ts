import { featureRequestCreateTool } from "./create";
import { featureRequestQueryTool } from "./query";
import { featureRequestSetStatusTool } from "./status";

export const feedbackTools = [featureRequestCreateTool, featureRequestQueryTool, featureRequestSetStatusTool];
