import { skillGetTool } from "./get";
import { skillListTool } from "./list";
import { skillUpsertTool } from "./upsert";

export const skillTools = [skillListTool, skillGetTool, skillUpsertTool];
