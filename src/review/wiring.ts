/**
 * The optional stages review_diff runs beside its preflight. Empty until the modules that do
 * invariants, static analysis and the LLM passes are wired in here; an absent stage makes
 * review_diff skip it with a warning, as the reference does without a runtime.
 */
import type { ReviewStages } from "./stages";

export const reviewStages: ReviewStages = {};
