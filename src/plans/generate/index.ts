import { createPlanTool, refinePlanTool } from "./draft";

/** Plans written by the language model (seed 004 "Planning Tools"), in the order agents meet them. */
export const generateTools = [createPlanTool, refinePlanTool];
