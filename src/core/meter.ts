/**
 * What a call costs against the caller's rate limits (docs/limits.md: Rate limits). A request is one unit;
 * a call that does more than one thing pays for it before any of it runs: each op of a composite
 * call (compact query/execute, docs_query/docs_execute) and each item of a batch write beyond
 * BATCH_ALLOWANCE. The counters are the route's (src/http/rate-limit.ts); this is only the arithmetic
 * and the interface tools see, so the core never reaches into the HTTP layer.
 */
import { z } from "zod";

/** Items of one batch write that ride on the call's own unit; each one beyond costs a unit. */
export const BATCH_ALLOWANCE = 10;

/**
 * How a tool's call can cost more than one unit. `{ items: "tasks" }`: a batch write, whose array
 * parameter `tasks` holds the things it writes. `"ops"`: a composite tool, whose ops the pipeline
 * engine charges one by one (src/core/pipeline.ts).
 */
export type CallCost = { items: string } | "ops";

export interface RateLimitReport {
  /** Units this request has counted so far: its own unit plus what its calls charged. */
  counted: number;
  /** Units left in the tightest of the caller's limits this minute; null with limits off or a counter unreachable. */
  remaining: number | null;
}

export const rateLimitField = z
  .object({
    counted: z.number().int().describe("Units this request counted against the rate limits: 1, plus 1 per op beyond the first and per batch item beyond the allowance."),
    remaining: z.number().int().nullable().describe("Units left this minute under the tightest limit (null: limits off, or the counter could not be reached)."),
  })
  .optional()
  .describe("What the call counted against your rate limits (docs/limits.md: Rate limits).");

export interface Meter {
  /**
   * Counts `extra` more units for this request before the work they pay for: what `call` (named
   * `what`, costing `units` in all) needs beyond what was already paid for it. Throws ToolError
   * `rate_limited` (nothing counted, nothing done) when they do not fit in what is left, or
   * `rate_limiter_unavailable` when a counter cannot be reached (calls that cost more than one
   * unit fail closed). Zero or fewer is a no-op.
   */
  charge(extra: number, call: { what: string; units: number }): Promise<void>;
  report(): RateLimitReport;
  /**
   * What work this request hands to later (an MCP task run from a queue) needs to charge the same
   * counters: plain JSON, turned back into a meter by the code that runs it. Absent: a meter whose
   * counts cannot follow the work (the work then runs uncounted, as every call outside /mcp does).
   */
  seed?(): MeterSeed;
}

/** A meter's counters, as JSON a queued run carries. */
export interface MeterSeed {
  buckets: { scope: string; name: string; perMinute: number }[];
}

/** The units of one call of a tool or op with this cost, from its (raw or parsed) parameters. */
export function unitsOf(cost: CallCost | undefined, params: Record<string, unknown>): number {
  if (cost === undefined || cost === "ops") return 1;
  const items = params[cost.items];
  return 1 + (Array.isArray(items) ? Math.max(0, items.length - BATCH_ALLOWANCE) : 0);
}
