/** Seed 004's review tools (toolset `review`, opt-in). Each file holds one room of them. */
import type { AnyToolDef } from "../../core/define-tool";
import { autoTools } from "./auto-tools";
import { diffTools } from "./diff-tools";
import { invariantTools } from "./invariant-tools";
import { llmReviewTools } from "./llm-tools";
import { reactiveTools } from "./reactive-tools";
import { secretTools } from "./secret-tools";
import { staticTools } from "./static-tools";

export const reviewTools: AnyToolDef[] = [...diffTools, ...autoTools, ...invariantTools, ...llmReviewTools, ...staticTools, ...secretTools, ...reactiveTools];
