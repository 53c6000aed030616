import { featureRequestCreateTool, featureRequestQueryTool, featureRequestSetStatusTool } from "./model";

export const feedbackTools = [featureRequestCreateTool, featureRequestQueryTool, featureRequestSetStatusTool];
