import type { Clock } from "./time";
import type { Env } from "../env";
import type { Confirmer } from "./confirmer";
import type { Meter } from "./meter";

/** Everything a tool handler may use: who is calling, and the stores it may touch. */
export interface Ctx {
  env: Env;
  d1: D1Database;
  tenantId: string;
  actorId: string;
  /** The calling actor's name (e.g. `claude-code`), as registered with its key. */
  actorName: string;
  /**
   * The key is an operator key: it may force a write over another actor's task lease and
   * heartbeat or end another actor's run. Never set from a tool parameter.
   */
  operator: boolean;
  /** The MCP session the call arrived in, or "" outside one. */
  sessionId: string;
  clock: Clock;
  /**
   * Present only inside an MCP session. Returns the session's run, minting it (and its runs row)
   * on first use and refreshing its heartbeat about once a minute; memoized per request. The
   * registry calls it before a write's handler runs; reads never do.
   */
  ensureRun?: () => Promise<string>;
  /** The session's run if a write already minted one, else null; never mints. Absent outside a session. */
  currentRun?: () => Promise<string | null>;
  /** The run this write is attributed to (set by the registry from ensureRun); absent for reads and outside sessions. */
  runId?: string;
  /**
   * How this call's confirmation questions reach the person (src/core/confirm.ts); set for every
   * MCP tool call, absent for callers that are not MCP clients (their call is the confirmation).
   */
  confirmer?: Confirmer;
  /** The call carried `confirm: true`: it stands for the person's yes where nobody can be asked. */
  confirmed?: boolean;
  /**
   * Reports progress of a long call to a client that asked for it (a progressToken); absent
   * otherwise. It never throws: a lost notification changes nothing. Await it, so notifications keep their order.
   */
  progress?: (done: number, total?: number, message?: string) => Promise<void>;
  /** Counts the request's work against the caller's rate limits (src/core/meter.ts); absent outside /mcp. */
  meter?: Meter;
  /**
   * Units already paid for the call this ctx runs: absent (1) for a request's call, a composite
   * step's share of its call's up-front charge, and what the outer call paid inside a handler (so
   * a tool another tool runs is charged only for work beyond that).
   */
  paid?: number;
  /**
   * The toolsets the caller's connection asked for (and whether it is read-only), for tools that
   * describe the caller's surface (tool_manifest); absent outside /mcp.
   */
  surface?: Surface;
  /**
   * Present while a keyed write runs (src/core/idempotency.ts): a handler that knows its answer
   * before its last batch puts `keyed.done(answer)` in that batch, and the call's idempotency
   * record is completed with the write instead of in a round trip after it.
   */
  keyed?: KeyedWrite;
  /** Work that may finish after the response (e.g. telemetry); never needed for correctness. */
  waitUntil(promise: Promise<unknown>): void;
}

/** What a request's tools/list shows: which toolsets, and whether only read-only tools. */
export interface Surface {
  /** Toolset ids, or `all`; empty means the default toolsets. */
  toolsets: readonly string[];
  readonly: boolean;
}

/** A keyed write's hold on its idempotency record (src/core/idempotency.ts), handed to its handler as ctx.keyed. */
export interface KeyedWrite {
  /**
   * What the handler's batch starts with, before its activity rows: for a tool whose key is taken
   * in its own write (ToolDef.keyedBatch), the statements that free an expired key and take it,
   * failing the whole batch when the key is held; none when the key was reserved before the run.
   */
  open(): D1PreparedStatement[];
  /**
   * The statement that records `answer` as this call's result. The handler runs it in the same
   * batch as its write (after the write's activity rows, which the record's retry window reads)
   * and then returns exactly `answer`; the record is then complete when the write is.
   */
  done(answer: unknown): D1PreparedStatement;
}
