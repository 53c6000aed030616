import { skillGetTool, skillListTool, skillUpsertTool } from "./model";

export const skillTools = [skillListTool, skillGetTool, skillUpsertTool];
