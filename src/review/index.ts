/** Seed 004's review tools (toolset `review`, opt-in). Each file holds one room of them. */
import type { AnyToolDef } from "../core/define-tool";
import { autoTools } from "./auto/review";
import { diffTools } from "./diff/review";
import { invariantTools } from "./invariants/check";
import { llmReviewTools } from "./llm/review";
import { reactiveTools } from "./reactive/start";
import { secretTools } from "./secrets/scrub";
import { staticTools } from "./static/run";

export const reviewTools: AnyToolDef[] = [...diffTools, ...autoTools, ...invariantTools, ...llmReviewTools, ...staticTools, ...secretTools, ...reactiveTools];
