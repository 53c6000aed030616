import { runEndTool, runForkTool, runGetTool, runHeartbeatTool, runQueryTool, runSummaryTool } from "./tools";

export const runTools = [runForkTool, runHeartbeatTool, runEndTool, runQueryTool, runGetTool, runSummaryTool];
