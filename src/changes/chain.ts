/**
 * The tamper-evident log (seed 000, `selvedge verify`): one SHA-256 hash chain per tenant over
 * change events and work-ledger decisions. Entry `pos` stores
 * sha256(hash of entry pos-1, the row's kind, the row's canonical content), written in the same
 * D1 batch as the row, so a row and its link land together or not at all. verify walks the chain
 * and names the first row that was edited, deleted or written around the ledger.
 */
import { desc, eq } from "drizzle-orm";
import { dbOf, statementOf } from "../db/client";
import { sha256Hex } from "../db/ids";
import { ledgerChain } from "../db/schema";
import { ToolError } from "../core/errors";
import { stableStringify } from "../core/idempotency";

export type ChainKind = "event" | "decision";

/**
 * The columns a link covers. Left out on purpose, because the server itself changes them after
 * the write: events.git_commit (the push webhook back-fills it) and decisions.status /
 * status_changed_at (decision_set_status moves them). A decision's content cannot change anyway.
 */
export const CHAINED_COLUMNS: Record<ChainKind, readonly string[]> = {
  event: [
    "id",
    "timestamp",
    "entity_type",
    "entity_path",
    "change_type",
    "diff",
    "reasoning",
    "agent",
    "actor_id",
    "session_id",
    "project",
    "changeset_id",
    "metadata",
    "revisit_after",
    "revisit_due",
    "expires_when",
    "stale_when",
    "supersedes",
    "constraint",
  ],
  decision: ["id", "project_id", "title", "choice", "context", "rationale", "options", "supersedes_decision_id", "created_by", "created_at"],
};
const TABLE: Record<ChainKind, string> = { event: "events", decision: "decisions" };
const START_COLUMN: Record<ChainKind, string> = { event: "events_seq", decision: "decisions_seq" };
const KINDS: readonly ChainKind[] = ["event", "decision"];

export interface ChainLink {
  kind: ChainKind;
  /** The row as stored: at least its CHAINED_COLUMNS. */
  row: Record<string, unknown>;
}

export function linkHash(previous: string, link: ChainLink): Promise<string> {
  const content = Object.fromEntries(CHAINED_COLUMNS[link.kind].map((c) => [c, link.row[c] ?? null]));
  return sha256Hex(`${previous}\n${link.kind}\n${stableStringify(content)}`);
}

/** Writers racing for the same head: one wins, the others retry on the new head. */
const APPEND_ATTEMPTS = 30;
const isHeadTaken = (err: unknown) => /UNIQUE constraint failed: ledger_chain\.tenant_id, ledger_chain\.pos/.test(String(err));

/**
 * Runs `writes` and appends one chain entry per link, atomically. The head is read first and the
 * entries claim the next positions; (tenant_id, pos) is the primary key, so a writer that read a
 * head another writer has since moved fails its whole batch (its rows included) and tries again:
 * a compare-and-swap on the head, which keeps concurrent writers from forking the chain.
 */
export async function appendChained(d1: D1Database, tenantId: string, at: string, writes: D1PreparedStatement[], links: ChainLink[]): Promise<D1Result[]> {
  const db = dbOf({ d1 });
  for (let attempt = 1; ; attempt++) {
    const head = await db.select({ pos: ledgerChain.pos, hash: ledgerChain.hash }).from(ledgerChain).where(eq(ledgerChain.tenantId, tenantId)).orderBy(desc(ledgerChain.pos)).limit(1).get();
    let pos = head?.pos ?? 0;
    let hash = head?.hash ?? "";
    const appends: D1PreparedStatement[] = [];
    for (const link of links) {
      pos++;
      hash = await linkHash(hash, link);
      // Plain statements, not db.batch: `writes` come from callers that build theirs without drizzle.
      appends.push(statementOf(d1, db.insert(ledgerChain).values({ tenantId, pos, kind: link.kind, rowId: String(link.row.id), hash, createdAt: at })));
    }
    try {
      return (await d1.batch([...writes, ...appends])).slice(0, writes.length);
    } catch (err) {
      if (!isHeadTaken(err)) throw err;
      if (attempt >= APPEND_ATTEMPTS) {
        throw new ToolError("conflict", "Too many concurrent writes to this tenant's ledger; nothing was written.", { hint: "Retry the call.", retryable: true });
      }
      await new Promise((r) => setTimeout(r, Math.random() * 3 * attempt));
    }
  }
}

/**
 * Reads for verify, over a Worker's D1 binding or the operator command's wrangler. Hand SQL on
 * purpose: wrangler takes SQL text, so these statements cannot go through drizzle's D1 driver.
 */
export interface SqlReader {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
}

export const d1Reader = (d1: D1Database): SqlReader => ({
  all: async <T>(sql: string, params: unknown[]) =>
    (
      await d1
        .prepare(sql)
        .bind(...params)
        .all<T>()
    ).results,
});

export interface ChainBreak {
  /** The chain position where the walk stopped; null for a row that has no entry at all. */
  position: number | null;
  kind: ChainKind | "";
  row_id: string;
  reason: "edited" | "deleted" | "link_broken" | "unchained";
  message: string;
}

export interface VerifyResult {
  intact: boolean;
  /** Entries checked by this call. */
  checked: number;
  /** Position of the last entry checked (the chain's head when next_position is absent). */
  position: number;
  first_break: ChainBreak | null;
  /** Rows from before the chain existed that the nightly sweep has not chained yet. */
  unchained_legacy: number;
  /** More entries follow: pass this as `after` to continue. */
  next_position?: number;
}

interface Entry {
  pos: number;
  kind: ChainKind;
  row_id: string;
  hash: string;
}

// Hand SQL: verify runs it over wrangler too (SqlReader), which takes SQL text only.
const unchainedSql = (kind: ChainKind, legacy: boolean, select: string) =>
  `SELECT ${select} FROM ${TABLE[kind]} r WHERE r.tenant_id = ?
     AND r.seq ${legacy ? "<=" : ">"} (SELECT ${START_COLUMN[kind]} FROM ledger_chain_start WHERE id = 1)
     AND NOT EXISTS (SELECT 1 FROM ledger_chain c WHERE c.tenant_id = r.tenant_id AND c.kind = '${kind}' AND c.row_id = r.id)`;

/**
 * Checks up to `limit` entries after position `after`: each entry follows the one before it, its
 * row still exists, and the row's content still hashes to what was recorded. The walk stops at the
 * first break. At the end of the chain it also looks for rows written since the chain began that
 * have no entry (inserted around the ledger).
 */
export async function verifyChain(db: SqlReader, tenantId: string, opts: { after: number; limit: number }): Promise<VerifyResult> {
  let previous = "";
  if (opts.after > 0) {
    const [at] = await db.all<{ hash: string }>(`SELECT hash FROM ledger_chain WHERE tenant_id = ? AND pos = ?`, [tenantId, opts.after]);
    if (!at) {
      return result(0, opts.after, { position: opts.after, kind: "", row_id: "", reason: "link_broken", message: `chain entry ${opts.after} is missing` }, 0);
    }
    previous = at.hash;
  }
  const entries = await db.all<Entry>(`SELECT pos, kind, row_id, hash FROM ledger_chain WHERE tenant_id = ? AND pos > ? ORDER BY pos LIMIT ?`, [tenantId, opts.after, opts.limit + 1]);
  const more = entries.length > opts.limit;
  const page = entries.slice(0, opts.limit);
  const rows = new Map<string, Record<string, unknown>>();
  for (const kind of KINDS) {
    const ids = page.filter((e) => e.kind === kind).map((e) => e.row_id);
    if (ids.length === 0) continue;
    const found = await db.all<Record<string, unknown>>(
      `SELECT ${CHAINED_COLUMNS[kind].map((c) => `"${c}"`).join(", ")} FROM ${TABLE[kind]} WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
      [tenantId, JSON.stringify(ids)],
    );
    for (const r of found) rows.set(`${kind}:${String(r.id)}`, r);
  }

  let position = opts.after;
  let checked = 0;
  for (const e of page) {
    checked++;
    const at = { position: e.pos, kind: e.kind, row_id: e.row_id };
    if (e.pos !== position + 1) {
      return result(checked, e.pos, { ...at, reason: "link_broken", message: `chain entries ${position + 1}–${e.pos - 1} are missing before ${e.kind} ${e.row_id}` }, 0);
    }
    const row = rows.get(`${e.kind}:${e.row_id}`);
    if (!row) return result(checked, e.pos, { ...at, reason: "deleted", message: `${e.kind} ${e.row_id} (chain entry ${e.pos}) was deleted` }, 0);
    if ((await linkHash(previous, { kind: e.kind, row })) !== e.hash) {
      return result(checked, e.pos, { ...at, reason: "edited", message: `${e.kind} ${e.row_id} (chain entry ${e.pos}) no longer matches the hash recorded when it was written` }, 0);
    }
    previous = e.hash;
    position = e.pos;
  }
  if (more) return { ...result(checked, position, null, 0), next_position: position };

  let legacy = 0;
  for (const kind of KINDS) {
    const [stray] = await db.all<{ id: string }>(`${unchainedSql(kind, false, "r.id")} ORDER BY r.seq LIMIT 1`, [tenantId]);
    if (stray) {
      return result(checked, position, { position: null, kind, row_id: stray.id, reason: "unchained", message: `${kind} ${stray.id} has no chain entry: it was written around the ledger` }, 0);
    }
    const [n] = await db.all<{ n: number }>(unchainedSql(kind, true, "COUNT(*) AS n"), [tenantId]);
    legacy += n?.n ?? 0;
  }
  return result(checked, position, null, legacy);
}

function result(checked: number, position: number, first_break: ChainBreak | null, unchained_legacy: number): VerifyResult {
  return { intact: first_break === null, checked, position, first_break, unchained_legacy };
}

/**
 * Chains up to `max` rows written before the chain existed, oldest first (events, then
 * decisions), through the same append as every writer. Returns how many it chained.
 */
export async function chainLegacyRows(d1: D1Database, tenantId: string, at: string, max: number): Promise<number> {
  let done = 0;
  for (const kind of KINDS) {
    while (done < max) {
      // Hand SQL: unchainedSql's text, which verify also runs through the operator command's wrangler.
      const { results } = await d1
        .prepare(`${unchainedSql(kind, true, CHAINED_COLUMNS[kind].map((c) => `r."${c}"`).join(", "))} ORDER BY r.seq LIMIT ?`)
        .bind(tenantId, Math.min(50, max - done))
        .all<Record<string, unknown>>();
      if (results.length === 0) break;
      await appendChained(
        d1,
        tenantId,
        at,
        [],
        results.map((row) => ({ kind, row })),
      );
      done += results.length;
    }
  }
  return done;
}
