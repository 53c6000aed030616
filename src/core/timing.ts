/**
 * Where one request's time goes, for the benchmarks only (bench/breakdown.ts): with BENCH_ROUTES=1,
 * for a request carrying the TIMINGS_HEADER, the edge opens a per-request record, the phases of an MCP call (auth, session, rate limit,
 * parsing, the server's set-up, validation, idempotency, the tool's own work, the envelope) add their
 * durations to it, and the response carries them as a `Server-Timing` header. Anywhere else no
 * record is open and `timed` only runs its function: production answers carry no timings. A tool
 * that another tool runs adds to the same phases as its caller.
 */
import { AsyncLocalStorage } from "node:async_hooks";

interface Record_ {
  start: number;
  phases: Map<string, number>;
}

const current = new AsyncLocalStorage<Record_>();

/** The request header that asks for Server-Timing (honoured only with BENCH_ROUTES=1). */
export const TIMINGS_HEADER = "X-Bench-Timings";

/** Runs `fn` with a timing record open when `on`, and returns its response with the record as `Server-Timing`. */
export async function withTimings(on: boolean, fn: () => Promise<Response>): Promise<Response> {
  if (!on) return fn();
  const record: Record_ = { start: performance.now(), phases: new Map() };
  const response = await current.run(record, fn);
  const total = performance.now() - record.start;
  const entries = [...record.phases].map(([name, ms]) => `${name};dur=${ms.toFixed(3)}`);
  const timed = new Response(response.body, response);
  timed.headers.set("Server-Timing", [...entries, `total;dur=${total.toFixed(3)}`].join(", "));
  return timed;
}

/** Adds `ms` to the phase `name` of the open record, if any. */
export function addTiming(name: string, ms: number): void {
  const record = current.getStore();
  if (record) record.phases.set(name, (record.phases.get(name) ?? 0) + ms);
}

/** The time since the record opened (0 with none): what the edge spent before a route's first line. */
export function sinceStart(): number {
  const record = current.getStore();
  return record ? performance.now() - record.start : 0;
}

/** Runs `fn`, counting its time to the phase `name` of the open record, if any. */
export async function timed<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
  if (!current.getStore()) return fn();
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    addTiming(name, performance.now() - t0);
  }
}
