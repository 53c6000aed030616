import type { ClaimsDO } from "./durable/claims";
import type { SessionDO } from "./durable/session";

/** Bindings and vars the Worker receives; see wrangler.toml. */
export interface Env {
  DB: D1Database;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  CLAIMS: DurableObjectNamespace<ClaimsDO>;
  /** Attachment blobs, keyed by tenant id and storage path. */
  BLOBS: R2Bucket;
  /** Comma-separated browser origins allowed to call /mcp. */
  ALLOWED_ORIGINS?: string;
  /** How long a running run may go without a heartbeat before the run reaper marks it abandoned (e.g. 2h; default 2h). */
  RUN_ABANDON_AFTER?: string;
  /** "1" mounts the benchmark-only routes (bench/ sets it on wrangler dev; never in production). */
  BENCH_ROUTES?: string;
}
