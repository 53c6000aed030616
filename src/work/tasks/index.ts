/** The tasks room (seed 001), in the order agents meet them. */
import { taskAssignTool, taskUpdateTool } from "./update";
import { taskClaimTool, taskReleaseTool } from "./claim";
import { taskCreateManyTool, taskCreateTool } from "./create";
import { taskGetTool, taskQueryTool } from "./read";
import { taskLinkTool } from "./link";

export const taskTools = [taskCreateTool, taskCreateManyTool, taskUpdateTool, taskAssignTool, taskQueryTool, taskGetTool, taskLinkTool, taskClaimTool, taskReleaseTool];
