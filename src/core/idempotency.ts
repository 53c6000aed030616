import { and, eq, type Placeholder, sql, type SQLWrapper } from "drizzle-orm";
import { compiled, type Db, dbOf, statementOf } from "../db/client";
import { sha256Hex } from "../db/ids";
import { idempotencyKeys } from "../db/schema";
import { iso } from "./time";
import type { Ctx, KeyedWrite } from "./context";
import type { DerivedRule } from "./define-tool";
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

/** How long an identical call counts as a retry of the first, when the caller passed no key. */
export const DERIVED_WINDOW_MS = 2 * 60 * 1000;
const DERIVED_PREFIX = "content:";

/** The run a write belongs to: the session's (minted by its first write), none without a session. */
const runOf = async (ctx: Ctx) => (ctx.ensureRun ? await ctx.ensureRun() : "");

/**
 * The key a work-ledger write gets when the caller passes none, as seed 001 has it: the call's
 * content (the arguments; the tool and the actor are already part of every key's scope) and the
 * current run. A client that retries a write it never heard back from gets the first result
 * instead of a second write, with or without a session and under any JSON-RPC id, for as long as
 * the repeat is still a retry (runIdempotent says when it stops being one).
 */
export async function derivedKey(ctx: Ctx, args: Record<string, unknown>): Promise<string> {
  // ensureRun, not currentRun: a session's first write mints its run, and a retry of that write
  // must derive the same key.
  return `${DERIVED_PREFIX}${await sha256Hex(`${await runOf(ctx)}\n${stableStringify(args)}`)}`;
}

/**
 * When an identical call stops being a retry of a finished one and runs again (SQL over the key's
 * row, with ?1 tenant, ?2 actor, ?3 tool): once the caller has made another call to the same tool
 * in the same run (a toggle: paused, active, paused), or once anyone has written to an object the
 * first call touched (its activity rows: the task it claimed was finished, the review it asked for
 * was answered, the plan it read got a new version). A retry comes at once, with nothing between.
 */
const NO_LONGER_A_RETRY = `
  EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.tenant_id = ?1 AND k.actor_id = ?2 AND k.tool = ?3
            AND k.run = idempotency_keys.run AND k.rowid > idempotency_keys.rowid)
  OR EXISTS (SELECT 1 FROM activity mine JOIN activity later
               ON later.tenant_id = mine.tenant_id AND later.object_type = mine.object_type AND later.object_id = mine.object_id
                  AND later.seq > idempotency_keys.activity_to
             WHERE mine.tenant_id = ?1 AND mine.actor_id = ?2
               AND mine.seq > idempotency_keys.activity_from AND mine.seq <= idempotency_keys.activity_to)`;

/** The tenant's newest activity seq, read inside the statement that stores it. */
const activityHead = (tenantId: SQLWrapper) => sql`(SELECT COALESCE(MAX(seq), 0) FROM activity WHERE tenant_id = ${tenantId})`;

const SCOPE = ["tenant", "actor", "tool", "key"] as const;
type Scope = Record<(typeof SCOPE)[number], string>;
const ofScope = (v: { [N in (typeof SCOPE)[number]]: SQLWrapper | string }) =>
  and(eq(idempotencyKeys.tenantId, v.tenant), eq(idempotencyKeys.actorId, v.actor), eq(idempotencyKeys.tool, v.tool), eq(idempotencyKeys.key, v.key));

// The reservation, the stored read and the done update are compiled once: every write runs them.
const KEY_ROW = [...SCOPE, "hash", "created", "expires", "run"] as const;
type KeyRow = Record<(typeof KEY_ROW)[number], string>;
const insertKey = (db: Db, v: { [N in (typeof KEY_ROW)[number]]: Placeholder<N> }) =>
  db.insert(idempotencyKeys).values({
    tenantId: v.tenant,
    actorId: v.actor,
    tool: v.tool,
    key: v.key,
    requestHash: v.hash,
    status: "pending",
    result: null,
    createdAt: v.created,
    expiresAt: v.expires,
    run: v.run,
    activityFrom: activityHead(v.tenant),
  });
/** Takes the key if it is free, answering the key when it did. */
const reserve = compiled(KEY_ROW, (db, v) =>
  insertKey(db, v)
    .onConflictDoNothing({ target: [idempotencyKeys.tenantId, idempotencyKeys.actorId, idempotencyKeys.tool, idempotencyKeys.key] })
    .returning({ key: idempotencyKeys.key }),
);
/** Takes the key or fails (the primary key refuses it): in a write's own batch, a held key fails the write. */
const take = compiled(KEY_ROW, insertKey);
/** What take's failure says, as D1 reports it. */
const isKeyHeld = (err: unknown) => /UNIQUE constraint failed: idempotency_keys\./.test(String(err));

const storedKey = compiled(SCOPE, (db, v) =>
  db
    .select({
      request_hash: idempotencyKeys.requestHash,
      status: idempotencyKeys.status,
      result: idempotencyKeys.result,
      created_at: idempotencyKeys.createdAt,
      expires_at: idempotencyKeys.expiresAt,
    })
    .from(idempotencyKeys)
    .where(ofScope(v)),
);

const markDone = compiled([...SCOPE, "result"], (db, v) =>
  db
    .update(idempotencyKeys)
    .set({ status: "done", result: sql`${v.result}`, activityTo: activityHead(v.tenant) })
    .where(ofScope(v)),
);

/** Completes a record: the answer kept, or the key let go where a derived key's rule keeps no answer. */
function completion<T>(ctx: Ctx, named: Scope, result: T, derived?: DerivedRule<unknown, T>): D1PreparedStatement {
  // Only a derived key lets go of an answer its tool will not replay; a caller's own key keeps any.
  if (derived?.keep?.(result) === false) return statementOf(ctx.d1, dbOf(ctx).delete(idempotencyKeys).where(ofScope(named)));
  return markDone(ctx.d1, { ...named, result: JSON.stringify(result) });
}

/**
 * Frees the key if it expired or its call died; a derived key also once a repeat is no longer a
 * retry. Deleted and inserted again rather than updated in place: the new row's rowid then orders
 * it after everything the actor wrote before.
 */
function freeKey(ctx: Ctx, named: Scope, now: Date, derived: boolean): D1PreparedStatement {
  // Hand SQL: the retry test is a correlated EXISTS over the row's own rowid and activity window.
  return ctx.d1
    .prepare(
      `DELETE FROM idempotency_keys WHERE tenant_id = ?1 AND actor_id = ?2 AND tool = ?3 AND key = ?4
       AND (expires_at <= ?5 OR (status = 'pending' AND created_at <= ?6)${derived ? ` OR (status = 'done' AND (${NO_LONGER_A_RETRY}))` : ""})`,
    )
    .bind(named.tenant, named.actor, named.tool, named.key, iso(now), iso(new Date(now.getTime() - ABANDONED_AFTER_MS)));
}

/**
 * Runs a write at most once per (tenant, actor, tool, key). The key is reserved with a
 * single-statement insert before the write runs, so two racing calls cannot both write; or, for a
 * tool whose one write batch carries the key (`inBatch`, ToolDef.keyedBatch), taken in that batch,
 * where a held key fails the whole write and the call is then answered as a reservation that
 * found it held. Only a successful result is kept, so a call that failed may be retried with its
 * key. `derived` is the tool's rule when the key was derived from the call's content (derivedKey).
 */
export async function runIdempotent<T>(
  ctx: Ctx,
  tool: string,
  key: string,
  args: Record<string, unknown>,
  run: (keyed: KeyedWrite) => Promise<T>,
  derived?: DerivedRule<unknown, T>,
  inBatch = false,
): Promise<{ result: T; replay: boolean }> {
  const requestHash = await sha256Hex(stableStringify(args));
  const now = ctx.clock.now();
  const named: Scope = { tenant: ctx.tenantId, actor: ctx.actorId, tool, key };
  const row: KeyRow = {
    ...named,
    hash: requestHash,
    created: iso(now),
    expires: iso(new Date(now.getTime() + (derived ? DERIVED_WINDOW_MS : IDEMPOTENCY_TTL_MS))),
    run: await runOf(ctx),
  };
  const free = freeKey(ctx, named, now, derived !== undefined);

  if (inBatch) {
    try {
      return { result: await runKeyed(ctx, named, run, derived, [free, take(ctx.d1, row)]), replay: false };
    } catch (err) {
      // Nothing of the call was written (its one batch failed whole); a held key is answered below.
      if (!isKeyHeld(err)) throw err;
    }
  }

  const [, inserted] = await ctx.d1.batch<{ key: string }>([free, reserve(ctx.d1, row)]);
  if (!inserted!.results[0]) {
    const stored = await storedKey(ctx.d1, named).first<{ request_hash: string; status: string; result: string | null; created_at: string; expires_at: string }>();
    if (!stored) throw new ToolError("idempotency_in_progress", "The idempotency key changed hands while this call ran.", { hint: "Retry the call.", retryable: true });
    if (stored.request_hash !== requestHash) {
      throw new ToolError("idempotency_key_reused", `idempotency_key '${key}' was already used for a different ${tool} call.`, {
        hint: "Use a new idempotency_key for a different write; reuse a key only to retry the identical call.",
      });
    }
    if (stored.status !== "done" || stored.result === null) {
      throw new ToolError("idempotency_in_progress", `A ${tool} call with idempotency_key '${key}' is still running.`, {
        hint: "Wait a moment and retry with the same key; you will get that call's result.",
        retryable: true,
      });
    }
    return { result: JSON.parse(stored.result) as T, replay: true };
  }
  try {
    return { result: await runKeyed(ctx, named, run, derived, []), replay: false };
  } catch (err) {
    await dbOf(ctx)
      .delete(idempotencyKeys)
      .where(and(ofScope(named), eq(idempotencyKeys.status, "pending")))
      .run();
    throw err;
  }
}

/** Runs the write with its hold on the key (`open`: what takes it in the write's batch, if the key is not reserved yet). */
async function runKeyed<T>(ctx: Ctx, named: Scope, run: (keyed: KeyedWrite) => Promise<T>, derived: DerivedRule<unknown, T> | undefined, open: D1PreparedStatement[]): Promise<T> {
  let folded: string | undefined;
  let opened = false;
  const keyed: KeyedWrite = {
    open: () => ((opened = true), open),
    done: (answer) => {
      folded = stableStringify(answer);
      return completion(ctx, named, answer as T, derived);
    },
  };
  const result = await run(keyed);
  // A handler that never took the key in its batch: it is taken now, with the answer.
  if (open.length > 0 && !opened) await ctx.d1.batch([...open, completion(ctx, named, result, derived)]);
  // Completed in the write's own batch unless the handler did not, or returned another answer than it recorded.
  else if (folded === undefined || folded !== stableStringify(result)) await completion(ctx, named, result, derived).run();
  return result;
}
