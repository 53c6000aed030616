/**
 * The optional stages review_diff runs beside its preflight, each from its own module. A stage
 * missing here would make review_diff skip it with a warning, as the reference does without a
 * runtime.
 */
import { invariantsStage } from "./invariants";
import { llmStage } from "./llm-passes";
import type { ReviewStages } from "./stages";
import { staticStage } from "./static-analysis";

export const reviewStages: ReviewStages = { invariants: invariantsStage, staticAnalysis: staticStage, llm: llmStage };
