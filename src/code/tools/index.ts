/** Seed 004's code context tools (toolset `code`, opt-in). */
import { contextTools } from "./context-tools";
import { indexTools } from "./index-tools";
import { searchTools } from "./search-tools";
import { symbolTools } from "./symbol-tools";

export const codeTools = [...searchTools, ...contextTools, ...indexTools, ...symbolTools];
