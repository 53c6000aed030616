/**
 * Runs (seed 001): every burst of work is a node in a tree of runs. A session's run is minted
 * by its first write (model.ts); these tools fork children, keep long runs alive, close them
 * with a verdict, and read what a run or a whole tree did.
 */
import { runEndTool } from "./end";
import { runForkTool } from "./fork";
import { runGetTool, runQueryTool } from "./read";
import { runHeartbeatTool } from "./heartbeat";
import { runSummaryTool } from "./summary";

export const runTools = [runForkTool, runHeartbeatTool, runEndTool, runQueryTool, runGetTool, runSummaryTool];
