/** Seed 004's review tools (toolset `review`, opt-in), room by room, for the catalog. */
import type { AnyToolDef } from "../core/define-tool";
import { autoTools } from "./auto";
import { diffTools } from "./diff";
import { invariantsTools } from "./invariants";
import { llmTools } from "./llm";
import { reactiveTools } from "./reactive";
import { secretsTools } from "./secrets";
import { settingsTools } from "./settings";
import { staticTools } from "./static";

export const reviewTools: AnyToolDef[] = [...diffTools, ...autoTools, ...invariantsTools, ...llmTools, ...staticTools, ...settingsTools, ...secretsTools, ...reactiveTools];
