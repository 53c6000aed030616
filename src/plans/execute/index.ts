import { executePlanTool } from "./execute";

/** A plan's steps written as code changes by the model, previewed or committed to GitHub. */
export const executeTools = [executePlanTool];
