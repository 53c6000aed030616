import { knowledgeSearchTool } from "./search";
import { knowledgeUpdateTool } from "./update";
import { knowledgeWriteTool } from "./write";

export const knowledgeTools = [knowledgeWriteTool, knowledgeUpdateTool, knowledgeSearchTool];
