/**
 * The tamper-evident log (seed 000, `selvedge verify`): one SHA-256 hash chain per tenant over
 * change events and work-ledger decisions. Entry `pos` stores
 * sha256(hash of entry pos-1, the row's kind, the row's canonical content), written in the same
 * D1 batch as the row, so a row and its link land together or not at all. verify walks the chain
 * and names the first row that was edited, deleted or written around the ledger.
 */
import { and, asc, desc, eq, getTableColumns, gt, inArray, lte, notExists, sql, type SQL } from "drizzle-orm";
import { alias, QueryBuilder, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { compiled, compiledInsert, dbOf, jsonValues, statementOf } from "../db/client";
import { bindingOf } from "../db/coalesce";
import { sha256Hex } from "../db/ids";
import { decisions, events, ledgerChain, ledgerChainStart } from "../db/schema";
import { ToolError } from "../core/errors";
import { fitting, GroupCommit } from "../core/group-commit";
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
const isHeadTaken = (err: unknown) => /UNIQUE constraint failed: ledger_chain\.tenant_id, ledger_chain\.pos|integer overflow/.test(String(err));

/**
 * The batch's first statement: it fails the whole batch (SQLite's abs() of the smallest integer is
 * an "integer overflow" error) unless the head it builds on is still there, with its hash; for an
 * empty chain, unless the tenant has no entry. With the primary key refusing a taken position,
 * that makes the append a compare-and-swap on the head even when the head it started from was
 * remembered rather than read (a restored database can move a head back).
 */
const headStillThere = (d1: D1Database, tenantId: string, head: { pos: number; hash: string }) =>
  d1
    .prepare(
      head.pos === 0
        ? "SELECT abs(CASE WHEN EXISTS (SELECT 1 FROM ledger_chain WHERE tenant_id = ?1) THEN -9223372036854775808 ELSE 0 END)"
        : "SELECT abs(CASE WHEN EXISTS (SELECT 1 FROM ledger_chain WHERE tenant_id = ?1 AND pos = ?2 AND hash = ?3) THEN 0 ELSE -9223372036854775808 END)",
    )
    .bind(...(head.pos === 0 ? [tenantId] : [tenantId, head.pos, head.hash]));

// Compiled once: every chained write reads the head and appends.
const chainHead = compiled(["tenant"], (db, v) =>
  db.select({ pos: ledgerChain.pos, hash: ledgerChain.hash }).from(ledgerChain).where(eq(ledgerChain.tenantId, v.tenant)).orderBy(desc(ledgerChain.pos)).limit(1),
);
const insertLink = compiledInsert(ledgerChain);

/**
 * This isolate's appends, the D1 batches that carried them (several appends share one when they
 * arrive together), and the batches lost to another writer and run again. The benchmarks read them.
 */
export const appendStats = { appends: 0, batches: 0, retries: 0 };

/** The head this isolate last read or wrote, per tenant: the next append starts from it without a read. */
const knownHeads = new Map<string, { pos: number; hash: string }>();
/** Tenants whose heads this isolate keeps; past it the oldest is forgotten (and read again when next used). */
const KNOWN_HEADS_MAX = 1000;
/** The longest the appends waiting in an isolate wait for the batch ahead of them before they go ahead anyway. */
export const TURN_WAIT_MS = 2000;
/**
 * At most this many statements in one group's batch; an append larger than that goes alone. D1
 * takes a batch as one request, but a smaller batch keeps one slow group from holding up the next.
 */
export const GROUP_STATEMENTS_MAX = 400;

interface Append {
  d1: D1Database;
  at: string;
  writes: D1PreparedStatement[];
  links: ChainLink[];
  resolve(results: D1Result[]): void;
  reject(err: unknown): void;
}

function rememberHead(tenantId: string, head: { pos: number; hash: string }): void {
  knownHeads.delete(tenantId);
  knownHeads.set(tenantId, head);
  if (knownHeads.size > KNOWN_HEADS_MAX) knownHeads.delete(knownHeads.keys().next().value!);
}

/**
 * Runs `writes` and appends one chain entry per link, atomically. The entries claim the positions
 * after the head; (tenant_id, pos) is the primary key, so a writer whose head another writer has
 * since moved fails its whole batch (its rows included) and tries again from the head it then
 * reads: a compare-and-swap on the head, which keeps concurrent writers from forking the chain.
 *
 * Within an isolate a tenant's appends never race each other: they queue, and the appends that
 * arrived while a batch was in flight go together in the next one (group commit), each with its
 * own chain entries in arrival order, starting from the head the isolate last wrote. So many
 * writers cost one D1 batch per group rather than one each, and no head read. `keepAlive` (the
 * request's waitUntil) keeps the queue going while this request leads it (src/core/group-commit.ts);
 * an append without one is committed on its own.
 */
export function appendChained(d1: D1Database, tenantId: string, at: string, writes: D1PreparedStatement[], links: ChainLink[], keepAlive?: (drain: Promise<void>) => void): Promise<D1Result[]> {
  return new Promise((resolve, reject) => {
    const append = { d1, at, writes, links, resolve, reject };
    // A caller that cannot keep a drain alive for others commits alone (the compare-and-swap orders it).
    if (!keepAlive) return void commitGroup(tenantId, [append]).catch(reject);
    keepAlive(appends.put(tenantId, append));
  });
}

/**
 * Writes a group in one batch: the head guard, then each append's writes and chain entries in
 * turn. A batch is all or nothing, so when one append's own statement fails, the others must not
 * pay for it: the group is then written append by append, and only that one fails.
 */
async function commitGroup(tenantId: string, group: Append[]): Promise<void> {
  const d1 = group[0]!.d1;
  for (let attempt = 1; ; attempt++) {
    const head = knownHeads.get(tenantId) ?? (await chainHead(d1, { tenant: tenantId }).first<{ pos: number; hash: string }>()) ?? { pos: 0, hash: "" };
    let { pos, hash } = head;
    const statements: D1PreparedStatement[] = [headStillThere(d1, tenantId, head)];
    const starts: number[] = [];
    for (const a of group) {
      starts.push(statements.length);
      // Plain statements, not db.batch: `writes` come from callers that build theirs without drizzle.
      statements.push(...a.writes);
      for (const link of a.links) {
        pos++;
        hash = await linkHash(hash, link);
        statements.push(insertLink(d1, { tenantId, pos, kind: link.kind, rowId: String(link.row.id), hash, createdAt: a.at }));
      }
    }
    try {
      const results = await d1.batch(statements);
      rememberHead(tenantId, { pos, hash });
      appendStats.appends += group.length;
      appendStats.batches++;
      group.forEach((a, i) => a.resolve(results.slice(starts[i], starts[i]! + a.writes.length)));
      return;
    } catch (err) {
      // Another isolate moved the head, or this one's memory of it is gone stale: read it again.
      knownHeads.delete(tenantId);
      if (!isHeadTaken(err)) {
        if (group.length === 1) group[0]!.reject(err);
        else for (const a of group) await commitGroup(tenantId, [a]);
        return;
      }
      appendStats.retries++;
      if (attempt >= APPEND_ATTEMPTS) {
        const conflict = new ToolError("conflict", "Too many concurrent writes to this tenant's ledger; nothing was written.", { hint: "Retry the call.", retryable: true });
        for (const a of group) a.reject(conflict);
        return;
      }
      await new Promise((r) => setTimeout(r, Math.random() * 3 * attempt));
    }
  }
}

/** Each tenant's appends in this isolate, committed group by group. */
const appends = new GroupCommit<Append>({
  // Appends over one binding, within the statement budget (the batch's guard is one more).
  take: (waiting) =>
    fitting(
      waiting,
      (a) => a.writes.length + a.links.length,
      GROUP_STATEMENTS_MAX - 1,
      // The same database, whichever request's binding (./db/coalesce) carried each append.
      (a, first) => bindingOf(a.d1) === bindingOf(first.d1),
    ),
  commit: commitGroup,
  // A failure outside the batch (the head's read): every append of the group hears it.
  fail: (group, err) => group.forEach((a) => a.reject(err)),
  stallMs: TURN_WAIT_MS,
  groupsPerLeader: 20,
});

/**
 * Reads for verify, over a Worker's D1 binding or the operator command's wrangler. Wrangler takes
 * SQL text, so verify builds its reads with drizzle's query builder and passes them on as text.
 */
export interface SqlReader {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
}

/** A drizzle-built read, as text and parameters over a SqlReader. */
const all = <T>(db: SqlReader, query: { toSQL(): { sql: string; params: unknown[] } }): Promise<T[]> => {
  const { sql: text, params } = query.toSQL();
  return db.all<T>(text, params);
};

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

/** Each kind's table, as `r` (the name unchained's correlated NOT EXISTS refers to). */
const ROWS = { event: alias(events, "r"), decision: alias(decisions, "r") } satisfies Record<ChainKind, unknown>;
const START: Record<ChainKind, SQLiteColumn> = { event: ledgerChainStart.eventsSeq, decision: ledgerChainStart.decisionsSeq };

/** A kind's CHAINED_COLUMNS as a drizzle field set on `r`, keyed by SQL column name in the same order. */
function chainedFields(kind: ChainKind): Record<string, SQLiteColumn> {
  const byName = new Map(Object.values(getTableColumns(ROWS[kind])).map((c) => [c.name, c]));
  return Object.fromEntries(CHAINED_COLUMNS[kind].map((c) => [c, byName.get(c)!]));
}

/**
 * A kind's rows that have no chain entry: written before the chain began (`legacy`, the sweep
 * chains those) or after it (written around the ledger). Verify reads it over SqlReader as text.
 */
function unchained(kind: ChainKind, tenantId: string, legacy: boolean): SQL {
  const r = ROWS[kind];
  const qb = new QueryBuilder();
  const start = sql`(${qb.select({ seq: START[kind] }).from(ledgerChainStart).where(eq(ledgerChainStart.id, 1))})`;
  const entry = qb
    .select({ one: sql`1` })
    .from(ledgerChain)
    .where(and(eq(ledgerChain.tenantId, r.tenantId), eq(ledgerChain.kind, kind), eq(ledgerChain.rowId, r.id)));
  return and(eq(r.tenantId, tenantId), legacy ? lte(r.seq, start) : gt(r.seq, start), notExists(entry))!;
}

/**
 * Checks up to `limit` entries after position `after`: each entry follows the one before it, its
 * row still exists, and the row's content still hashes to what was recorded. The walk stops at the
 * first break. At the end of the chain it also looks for rows written since the chain began that
 * have no entry (inserted around the ledger).
 */
export async function verifyChain(db: SqlReader, tenantId: string, opts: { after: number; limit: number }): Promise<VerifyResult> {
  const qb = new QueryBuilder();
  let previous = "";
  if (opts.after > 0) {
    const [at] = await all<{ hash: string }>(
      db,
      qb
        .select({ hash: ledgerChain.hash })
        .from(ledgerChain)
        .where(and(eq(ledgerChain.tenantId, tenantId), eq(ledgerChain.pos, opts.after))),
    );
    if (!at) {
      return result(0, opts.after, { position: opts.after, kind: "", row_id: "", reason: "link_broken", message: `chain entry ${opts.after} is missing` }, 0);
    }
    previous = at.hash;
  }
  const entries = await all<Entry>(
    db,
    qb
      .select({ pos: ledgerChain.pos, kind: ledgerChain.kind, row_id: ledgerChain.rowId, hash: ledgerChain.hash })
      .from(ledgerChain)
      .where(and(eq(ledgerChain.tenantId, tenantId), gt(ledgerChain.pos, opts.after)))
      .orderBy(asc(ledgerChain.pos))
      .limit(opts.limit + 1),
  );
  const more = entries.length > opts.limit;
  const page = entries.slice(0, opts.limit);
  const rows = new Map<string, Record<string, unknown>>();
  for (const kind of KINDS) {
    const ids = page.filter((e) => e.kind === kind).map((e) => e.row_id);
    if (ids.length === 0) continue;
    const r = ROWS[kind];
    const found = await all<Record<string, unknown>>(
      db,
      qb
        .select(chainedFields(kind))
        .from(r)
        .where(and(eq(r.tenantId, tenantId), inArray(r.id, jsonValues(ids)))),
    );
    for (const row of found) rows.set(`${kind}:${String(row.id)}`, row);
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
    const r = ROWS[kind];
    const [stray] = await all<{ id: string }>(
      db,
      qb
        .select({ id: r.id })
        .from(r)
        .where(unchained(kind, tenantId, false))
        .orderBy(asc(r.seq))
        .limit(1),
    );
    if (stray) {
      return result(checked, position, { position: null, kind, row_id: stray.id, reason: "unchained", message: `${kind} ${stray.id} has no chain entry: it was written around the ledger` }, 0);
    }
    const [n] = await all<{ n: number }>(
      db,
      qb
        .select({ n: sql<number>`COUNT(*)`.as("n") })
        .from(r)
        .where(unchained(kind, tenantId, true)),
    );
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
      const r = ROWS[kind];
      // Read as D1 returns it (statementOf, not drizzle's mapping): the hash covers the stored values.
      const { results } = await statementOf(
        d1,
        dbOf({ d1 })
          .select(chainedFields(kind))
          .from(r)
          .where(unchained(kind, tenantId, true))
          .orderBy(asc(r.seq))
          .limit(Math.min(50, max - done)),
      ).all<Record<string, unknown>>();
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

export interface RowsCheck {
  /** No cited row was found edited, deleted or written around the ledger. */
  intact: boolean;
  /** Rows whose own chain entry was recomputed and matched. */
  checked: number;
  /** Rows from before the chain existed that the nightly sweep has not chained yet. */
  unchained_legacy: number;
  /** The first problem, by chain position (a row with no entry last), or null. */
  first_break: ChainBreak | null;
}

/**
 * Checks the links of some rows only (what a report cites): each row's entry is recomputed from
 * the entry before it and the row as stored now, so a row edited or deleted since it was written
 * shows, without walking the whole chain (verifyChain does that, and the nightly sweep).
 */
export async function verifyRows(db: SqlReader, tenantId: string, cited: ReadonlyArray<{ kind: ChainKind; id: string }>): Promise<RowsCheck> {
  const qb = new QueryBuilder();
  const breaks: ChainBreak[] = [];
  let checked = 0;
  let legacy = 0;
  for (const kind of KINDS) {
    const ids = [...new Set(cited.filter((c) => c.kind === kind).map((c) => c.id))];
    if (ids.length === 0) continue;
    const entries = await all<Entry>(
      db,
      qb
        .select({ pos: ledgerChain.pos, kind: ledgerChain.kind, row_id: ledgerChain.rowId, hash: ledgerChain.hash })
        .from(ledgerChain)
        .where(and(eq(ledgerChain.tenantId, tenantId), eq(ledgerChain.kind, kind), inArray(ledgerChain.rowId, jsonValues(ids)))),
    );
    const before = new Map(
      (
        await all<{ pos: number; hash: string }>(
          db,
          qb
            .select({ pos: ledgerChain.pos, hash: ledgerChain.hash })
            .from(ledgerChain)
            .where(and(eq(ledgerChain.tenantId, tenantId), inArray(ledgerChain.pos, jsonValues(entries.map((e) => e.pos - 1))))),
        )
      ).map((p) => [p.pos, p.hash]),
    );
    const r = ROWS[kind];
    const rows = new Map(
      (
        await all<Record<string, unknown>>(
          db,
          qb
            .select({ ...chainedFields(kind), seq: r.seq })
            .from(r)
            .where(and(eq(r.tenantId, tenantId), inArray(r.id, jsonValues(ids)))),
        )
      ).map((row) => [String(row.id), row]),
    );
    for (const e of entries) {
      const at = { position: e.pos, kind, row_id: e.row_id };
      const previous = e.pos === 1 ? "" : before.get(e.pos - 1);
      const row = rows.get(e.row_id);
      if (previous === undefined) breaks.push({ ...at, reason: "link_broken", message: `chain entry ${e.pos - 1}, before ${kind} ${e.row_id}, is missing` });
      else if (!row) breaks.push({ ...at, reason: "deleted", message: `${kind} ${e.row_id} (chain entry ${e.pos}) was deleted` });
      else if ((await linkHash(previous, { kind, row })) !== e.hash)
        breaks.push({ ...at, reason: "edited", message: `${kind} ${e.row_id} (chain entry ${e.pos}) no longer matches the hash recorded when it was written` });
      else checked++;
    }
    const entered = new Set(entries.map((e) => e.row_id));
    const loose = [...rows.values()].filter((row) => !entered.has(String(row.id)));
    if (loose.length > 0) {
      const [start] = await all<{ seq: number }>(db, qb.select({ seq: START[kind] }).from(ledgerChainStart).where(eq(ledgerChainStart.id, 1)));
      for (const row of loose.sort((a, b) => Number(a.seq) - Number(b.seq))) {
        if (Number(row.seq) <= (start?.seq ?? 0)) legacy++;
        else breaks.push({ position: null, kind, row_id: String(row.id), reason: "unchained", message: `${kind} ${String(row.id)} has no chain entry: it was written around the ledger` });
      }
    }
  }
  breaks.sort((a, b) => (a.position ?? Number.MAX_SAFE_INTEGER) - (b.position ?? Number.MAX_SAFE_INTEGER) || a.row_id.localeCompare(b.row_id));
  return { intact: breaks.length === 0, checked, unchained_legacy: legacy, first_break: breaks[0] ?? null };
}
