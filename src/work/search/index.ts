import { searchTool } from "./search";

export const searchTools = [searchTool];
