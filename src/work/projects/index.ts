import { projectBriefTool } from "./brief";
import { projectCreateTool } from "./create";
import { projectQueryTool } from "./query";
import { projectUpdateTool } from "./update";

export const projectTools = [projectCreateTool, projectUpdateTool, projectQueryTool, projectBriefTool];
