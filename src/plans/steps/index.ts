import { completeStepTool, failStepTool, startStepTool } from "./move";
import { viewProgressTool } from "./view";

/** Step tracking (seed 004 "Execution tracking"), in the order agents meet them. */
export const stepsTools = [startStepTool, completeStepTool, failStepTool, viewProgressTool];
