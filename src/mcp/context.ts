import type { Db } from "../db/client";
import type { Clock } from "../db/time";
import type { Env } from "../env";

/** Everything a tool handler may use: who is calling, and the stores it may touch. */
export interface Ctx {
  env: Env;
  d1: D1Database;
  db: Db;
  tenantId: string;
  actorId: string;
  /** The calling actor's name (e.g. `claude-code`), as registered with its key. */
  actorName: string;
  /** The MCP session the call arrived in, or "" outside one. */
  sessionId: string;
  /** The JSON-RPC id of the tools/call being served (a transport retry resends the same id), or null. */
  requestId?: string | number | null;
  clock: Clock;
  /** Work that may finish after the response (e.g. telemetry); never needed for correctness. */
  waitUntil(promise: Promise<unknown>): void;
}
