import { planToTasksTool } from "./plan-to-tasks";

/** A plan's steps as work-ledger tasks, in the order agents meet them. */
export const toTasksTools = [planToTasksTool];
