import { handoffClaimTool } from "./claim";
import { handoffCreateTool } from "./create";
import { handoffQueryTool, inboxTool } from "./query";
import { handoffResolveTool } from "./resolve";
import { handoffRespondTool } from "./respond";

export const handoffTools = [handoffCreateTool, handoffClaimTool, handoffRespondTool, handoffResolveTool, handoffQueryTool, inboxTool];
