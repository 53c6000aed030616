import { visualizePlanTool } from "./visualize";

/** A plan drawn as Mermaid diagrams. */
export const visualizeTools = [visualizePlanTool];
