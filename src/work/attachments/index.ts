import { attachAddTool } from "./add";
import { attachRemoveTool } from "./remove";
import { attachmentQueryTool } from "./query";

export const attachmentTools = [attachAddTool, attachRemoveTool, attachmentQueryTool];
