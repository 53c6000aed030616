/**
 * The optional stages review_diff runs beside its preflight, each from its own module. A stage
 * missing here would make review_diff skip it with a warning, as the reference does without a
 * runtime.
 */
import { invariantsStage } from "../checks/invariants";
import { llmStage } from "../llm-review/passes";
import type { ReviewStages } from "./stages";
import { staticStage } from "../checks/static-analysis";

export const reviewStages: ReviewStages = { invariants: invariantsStage, staticAnalysis: staticStage, llm: llmStage };
