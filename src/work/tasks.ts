/** The tasks room (seed 001), in the order agents meet them. */
import { taskClaimTool, taskReleaseTool } from "./task-claim";
import { taskCreateManyTool, taskCreateTool } from "./task-create";
import { taskLinkTool } from "./task-link";
import { taskGetTool, taskQueryTool } from "./task-read";
import { taskAssignTool, taskUpdateTool } from "./task-update";

export const taskTools = [taskCreateTool, taskCreateManyTool, taskUpdateTool, taskAssignTool, taskQueryTool, taskGetTool, taskLinkTool, taskClaimTool, taskReleaseTool];
