/** The tasks room (seed 001), in the order agents meet them. */
import { taskClaimTool, taskReleaseTool } from "./claim";
import { taskCreateManyTool, taskCreateTool } from "./create";
import { taskLinkTool } from "./link";
import { taskGetTool, taskQueryTool } from "./read";
import { taskAssignTool, taskUpdateTool } from "./update";

export const taskTools = [taskCreateTool, taskCreateManyTool, taskUpdateTool, taskAssignTool, taskQueryTool, taskGetTool, taskLinkTool, taskClaimTool, taskReleaseTool];
