/**
 * Finding events that contain a text, newest first, without reading the whole ledger.
 * Three or more characters are narrowed by the trigram FTS index (events_fts) and walked by
 * rowid from the newest down; each candidate is re-tested as a literal substring, since
 * trigram matching folds non-ASCII case and the ledger's substring semantics (LIKE's) do not.
 * Shorter texts cannot use trigrams and scan the tenant's events newest first.
 * The FTS walk stays hand SQL: drizzle cannot say `events_fts MATCH`, nor pin the join order with CROSS JOIN.
 */
import { and, desc, eq, lt, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { dbOf, statementOf } from "../db/client";
import { ftsPhrase } from "../core/fts";
import type { Ctx } from "../core/context";
import { e, EVENT_COLUMNS, eventFields, type EventRowRaw } from "./events";
import { contains } from "./paths";

/** Candidates per round trip. */
const BATCH = 200;

/** Events whose entity_path, diff, reasoning, agent or constraint contains `needle` (a literal, ASCII case folded). */
const eventContains = (needle: SQLWrapper): SQL => or(...[e.entityPath, e.diff, e.reasoning, e.agent, e.constraint].map((c) => contains(c, needle)))!;

/** eventContains as SQL text over ?1, for the FTS walk's hand SQL. */
const CONTAINS_SQL = new SQLiteAsyncDialect().sqlToQuery(eventContains(sql.raw("?1"))).sql;

/**
 * One batch of FTS candidates (?2 phrase, below rowid ?3, ?4 of them) re-checked for tenant ?5.
 * CROSS JOIN keeps the FTS walk the outer loop: left to itself SQLite may scan all of the
 * tenant's events instead, to save sorting a batch, which makes every search linear in the
 * ledger's size (a test pins this plan).
 */
export const FTS_BATCH_SQL = `SELECT ${EVENT_COLUMNS} FROM
    (SELECT rowid FROM events_fts WHERE events_fts MATCH ?2 AND rowid < ?3 ORDER BY rowid DESC LIMIT ?4) f
  CROSS JOIN events e ON e.seq = f.rowid
  WHERE e.tenant_id = ?5 AND ${CONTAINS_SQL}
  ORDER BY e.seq DESC`;

const FTS_WINDOW_SQL = `SELECT MIN(rowid) AS low, COUNT(*) AS n FROM
  (SELECT rowid FROM events_fts WHERE events_fts MATCH ?1 AND rowid < ?2 ORDER BY rowid DESC LIMIT ?3)`;

/** Short texts: one batch of the tenant's events below `before` that contain `needle`, newest first. */
const scanBatch = (ctx: Ctx, needle: string, before: number): D1PreparedStatement =>
  statementOf(
    ctx.d1,
    dbOf(ctx)
      .select(eventFields)
      .from(e)
      .where(and(eq(e.tenantId, ctx.tenantId), lt(e.seq, before), eventContains(sql`${needle}`)))
      .orderBy(desc(e.seq))
      .limit(BATCH),
  );

export interface WalkOptions {
  /** Only events appended before this position (a cursor's seq, or MAX_SAFE_INTEGER). */
  before: number;
  /** Statements to send in the first round trip (e.g. the telemetry row), saving one. */
  withFirst?: D1PreparedStatement[];
  /** Receives each batch of matches, newest first; returns false to stop. */
  take(rows: EventRowRaw[]): boolean;
  /** At most this many round trips. */
  maxBatches?: number;
}

/** Lower-cases ASCII only, as SQLite's lower() does, so JS re-checks agree with SQL ones. */
export const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

export async function walkContaining(ctx: Ctx, needle: string, opts: WalkOptions): Promise<void> {
  const short = [...needle].length < 3;
  const phrase = ftsPhrase(needle);
  let before = opts.before;
  let extra = opts.withFirst ?? [];
  for (let round = 0; round < (opts.maxBatches ?? Number.POSITIVE_INFINITY); round++) {
    let rows: EventRowRaw[];
    let exhausted: boolean;
    let next: number;
    if (short) {
      const results = await ctx.d1.batch<EventRowRaw>([...extra, scanBatch(ctx, needle, before)]);
      rows = results[results.length - 1]!.results;
      exhausted = rows.length < BATCH;
      next = rows[rows.length - 1]?.seq ?? 0;
    } else {
      const results = await ctx.d1.batch<EventRowRaw & { low: number | null; n: number }>([
        ...extra,
        ctx.d1.prepare(FTS_BATCH_SQL).bind(needle, phrase, before, BATCH, ctx.tenantId),
        ctx.d1.prepare(FTS_WINDOW_SQL).bind(phrase, before, BATCH),
      ]);
      rows = results[results.length - 2]!.results;
      const window = results[results.length - 1]!.results[0];
      exhausted = !window || window.n < BATCH;
      next = window?.low ?? 0;
    }
    extra = [];
    if (!opts.take(rows) || exhausted) return;
    before = next;
  }
}
