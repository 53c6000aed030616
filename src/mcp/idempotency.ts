import { sha256Hex } from "../db/ids";
import { iso } from "../db/time";
import type { Ctx } from "./context";
import { ToolError } from "./errors";

/** How long a key is remembered; the retention job sweeps older ones. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A reservation older than this was left by a call that died; another call may take it over. */
const ABANDONED_AFTER_MS = 2 * 60 * 1000;

/** JSON with object keys sorted, so the same arguments always hash the same. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The key a work-ledger write gets when the caller passes none: the session, the JSON-RPC
 * request id and the arguments (the actor is already part of every key's scope). A transport
 * retry resends the same message, so it replays; a new call has a new request id, so setting a
 * field back to an earlier value in the same session is never mistaken for a retry. Without a
 * session or a request id there is nothing to tell a retry from a new call: no key is derived.
 */
export async function derivedKey(ctx: Ctx, args: Record<string, unknown>): Promise<string | undefined> {
  if (!ctx.sessionId || ctx.requestId === undefined || ctx.requestId === null) return undefined;
  return `derived:${await sha256Hex(`${ctx.sessionId}\n${JSON.stringify(ctx.requestId)}\n${stableStringify(args)}`)}`;
}

interface StoredKey {
  request_hash: string;
  status: string;
  result: string | null;
  created_at: string;
  expires_at: string;
}

/**
 * Runs a write at most once per (tenant, actor, tool, key). The key is reserved with a
 * single-statement insert before the write runs, so two racing calls cannot both write;
 * only a successful result is kept, so a call that failed may be retried with its key.
 */
export async function runIdempotent<T>(
  ctx: Ctx,
  tool: string,
  key: string,
  args: Record<string, unknown>,
  run: () => Promise<T>,
): Promise<{ result: T; replay: boolean }> {
  const requestHash = await sha256Hex(stableStringify(args));
  const now = ctx.clock.now();
  const scope = [ctx.tenantId, ctx.actorId, tool, key] as const;

  const reserved = await ctx.d1
    .prepare(
      `INSERT INTO idempotency_keys (tenant_id, actor_id, tool, key, request_hash, status, result, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, 'pending', NULL, ?, ?)
       ON CONFLICT (tenant_id, actor_id, tool, key) DO UPDATE SET request_hash = excluded.request_hash, status = 'pending', result = NULL,
         created_at = excluded.created_at, expires_at = excluded.expires_at
       WHERE idempotency_keys.expires_at <= excluded.created_at
          OR (idempotency_keys.status = 'pending' AND idempotency_keys.created_at <= ?)
       RETURNING key`,
    )
    .bind(...scope, requestHash, iso(now), iso(new Date(now.getTime() + IDEMPOTENCY_TTL_MS)),
      iso(new Date(now.getTime() - ABANDONED_AFTER_MS)))
    .first();

  if (!reserved) {
    const stored = await ctx.d1
      .prepare(
        `SELECT request_hash, status, result, created_at, expires_at FROM idempotency_keys
         WHERE tenant_id = ? AND actor_id = ? AND tool = ? AND key = ?`,
      )
      .bind(...scope)
      .first<StoredKey>();
    if (!stored) throw new ToolError("idempotency_in_progress", "The idempotency key changed hands while this call ran.", { hint: "Retry the call.", retryable: true });
    if (stored.request_hash !== requestHash) {
      throw new ToolError(
        "idempotency_key_reused",
        `idempotency_key '${key}' was already used for a different ${tool} call.`,
        { hint: "Use a new idempotency_key for a different write; reuse a key only to retry the identical call." },
      );
    }
    if (stored.status !== "done" || stored.result === null) {
      throw new ToolError("idempotency_in_progress", `A ${tool} call with idempotency_key '${key}' is still running.`, {
        hint: "Wait a moment and retry with the same key; you will get that call's result.",
        retryable: true,
      });
    }
    return { result: JSON.parse(stored.result) as T, replay: true };
  }

  let result: T;
  try {
    result = await run();
  } catch (err) {
    await ctx.d1
      .prepare(`DELETE FROM idempotency_keys WHERE tenant_id = ? AND actor_id = ? AND tool = ? AND key = ? AND status = 'pending'`)
      .bind(...scope)
      .run();
    throw err;
  }
  await ctx.d1
    .prepare(`UPDATE idempotency_keys SET status = 'done', result = ? WHERE tenant_id = ? AND actor_id = ? AND tool = ? AND key = ?`)
    .bind(JSON.stringify(result), ...scope)
    .run();
  return { result, replay: false };
}
