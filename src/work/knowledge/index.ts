import { knowledgeSearchTool, knowledgeUpdateTool, knowledgeWriteTool } from "./model";

export const knowledgeTools = [knowledgeWriteTool, knowledgeUpdateTool, knowledgeSearchTool];
