import { projectBriefTool, projectCreateTool, projectQueryTool, projectUpdateTool } from "./model";

export const projectTools = [projectCreateTool, projectUpdateTool, projectQueryTool, projectBriefTool];
