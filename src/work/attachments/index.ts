import { attachAddTool, attachmentQueryTool, attachRemoveTool } from "./model";

export const attachmentTools = [attachAddTool, attachRemoveTool, attachmentQueryTool];
