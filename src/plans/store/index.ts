import { deletePlanTool } from "./delete";
import { listPlansTool, loadPlanTool } from "./read";
import { savePlanTool } from "./save";
import { comparePlanVersionsTool, rollbackPlanTool, viewHistoryTool } from "./versions";

/** The plan store (seed 004 "Persistence Tools"), in the order agents meet them. */
export const storeTools = [savePlanTool, loadPlanTool, listPlansTool, deletePlanTool, viewHistoryTool, comparePlanVersionsTool, rollbackPlanTool];
