import { handoffClaimTool, handoffCreateTool, handoffQueryTool, handoffResolveTool, handoffRespondTool, inboxTool } from "./model";

export const handoffTools = [handoffCreateTool, handoffClaimTool, handoffRespondTool, handoffResolveTool, handoffQueryTool, inboxTool];
