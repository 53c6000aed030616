import type { z } from "zod";
import type { Ctx } from "../core/context";
import type { CallCost } from "../core/meter";

/** Which composite tool runs an op: docs_query (reads), docs_execute (writes) or docs_session. */
export type OpCategory = "query" | "execute" | "session";

/**
 * One document-store operation (seed 003), defined once. The composite tools validate `params`
 * with the same zod schema `describe` publishes, after the generic input rules every tool keeps
 * (camelCase aliases, unknown keys refused, control characters refused).
 */
export interface OpDef<P extends z.ZodObject = z.ZodObject> {
  name: string;
  category: OpCategory;
  /** One or two sentences: what the op does and what it returns. */
  description: string;
  /** Every field `.describe()`d and bounded (strings maxLength, arrays maxItems); test/input-bounds walks ops too. */
  params: P;
  /**
   * The seed's own renames and actionable refusals, applied to the raw params before validation
   * (e.g. search `q` → `query`; add with `url` → "use 'download'"). camelCase → snake_case is
   * generic and needs no entry. Throws ToolError with the seed's text.
   */
  normalize?(params: Record<string, unknown>): Record<string, unknown>;
  /** A batch op's array of items, each beyond the allowance a rate-limit unit (src/core/meter.ts). */
  cost?: Exclude<CallCost, "ops">;
  run(ctx: Ctx, params: z.output<P>): Promise<Record<string, unknown>>;
  /**
   * Runs consecutive calls of the op together (docs_execute's run of adds; see PipelineOp.invokeRun),
   * with the same effects and answers as `run` on each in turn. One outcome per call, in order;
   * with `stopAtFailure` they end at the first failure and nothing after it was written.
   */
  runMany?(ctx: Ctx, params: z.output<P>[], stopAtFailure: boolean): Promise<({ ok: true; data: Record<string, unknown> } | { ok: false; error: unknown })[]>;
}

/** Identity function that ties an op's params type to its handler. */
export function defineOp<P extends z.ZodObject>(op: OpDef<P>): OpDef<P> {
  return op;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOpDef = OpDef<any>;

/**
 * What a docs session's pins cover (docs_session pin/unpin): a live document is in scope when its
 * path matches one of the globs (as src/core/glob.ts matches them) or its content hash is listed. `list` and
 * `search` restrict themselves to it when the caller has a current session with pins.
 */
export interface DocScope {
  patterns: string[];
  hashes: string[];
}
