/**
 * The plans toolset's rooms, gathered for the catalog (src/server/registry.ts) in the order agents
 * meet them: the store, the plans the model writes, diagrams, execution, approvals, step tracking,
 * and steps as tasks.
 */
import { approvalsTools } from "./approvals";
import { executeTools } from "./execute";
import { generateTools } from "./generate";
import { stepsTools } from "./steps";
import { storeTools } from "./store";
import { toTasksTools } from "./to-tasks";
import { visualizeTools } from "./visualize";

export const planTools = [...storeTools, ...generateTools, ...visualizeTools, ...executeTools, ...approvalsTools, ...stepsTools, ...toTasksTools];
