/** The event shape every change-ledger read returns, and the shared ways of reading events. */
import { z } from "zod";
import { and, asc, desc, eq, gt, is, lt, or, sql, SQL } from "drizzle-orm";
import { alias, SQLiteAsyncDialect, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { compiledInsert, dbOf, statementOf } from "../db/client";
import { events, toolCalls } from "../db/schema";
import { iso } from "../core/time";
import type { Ctx } from "../core/context";
import { decodeKeyset, encodeKeyset } from "../core/cursor";
import { invalidInput } from "../core/errors";
import { canonicalPath, pathMatch } from "./paths";

export const eventSchema = z.object({
  id: z.string().describe("Event id (UUIDv7)."),
  timestamp: z.string().describe("When the change was logged (UTC ISO-8601)."),
  entity_path: z.string().describe("Canonical path of the entity that changed."),
  entity_type: z.string().describe("Kind of entity (column, table, file, function, …, other)."),
  change_type: z.string().describe("What happened (add, remove, modify, rename, …)."),
  diff: z.string().describe('The diff text, or "".'),
  reasoning: z.string().describe('Why the change was made, or "".'),
  agent: z.string().describe("The agent that logged it, as it named itself (default: its key's actor)."),
  actor: z.string().describe('The actor whose API key logged it, or "".'),
  session_id: z.string().describe('Session correlation id, or "".'),
  git_commit: z.string().describe('Commit hash, or "".'),
  project: z.string().describe('Project name, or "".'),
  changeset_id: z.string().describe('Changeset slug grouping related changes, or "".'),
  metadata: z.record(z.string(), z.unknown()).describe("Extra data, e.g. renamed_from; {} when none."),
  revisit_after: z.string().describe('Revisit date or offset for the decision, or "".'),
  expires_when: z.string().describe('Condition under which the decision expires, or "".'),
  stale_when: z.string().describe('Free-text condition that suggests a review, or "".'),
  supersedes: z.string().describe('Id of the removal this supersede re-opens, or "".'),
  constraint: z.string().describe('What the change must keep holding, or "".'),
  superseded_by: z.string().describe('Id of the latest supersede event that re-opened this one, or "".'),
});
export type ChangeEvent = z.infer<typeof eventSchema>;

/** An event plus its append position, used for ordering and cursors. */
export type EventWithSeq = ChangeEvent & { seq: number };

/** Events as every change-ledger read names them: `e`, which the FTS5 walk's hand SQL joins too. */
export const e = alias(events, "e");

/**
 * The fields of an event row, keyed by SQL column name (the rows' keys whether drizzle or D1 reads
 * them). The actor's name and superseded_by are correlated subqueries per row; `<> ''` stays a
 * literal so the partial index on supersedes (WHERE supersedes <> '') stays usable.
 */
export const eventFields = {
  seq: e.seq,
  id: e.id,
  timestamp: e.timestamp,
  entity_path: e.entityPath,
  entity_type: e.entityType,
  change_type: e.changeType,
  diff: e.diff,
  reasoning: e.reasoning,
  agent: e.agent,
  // Written out: in a single-table select drizzle drops table names inside fields, and these subqueries need `e.` to correlate.
  actor: sql<string>`COALESCE((SELECT a.name FROM actors a WHERE a.tenant_id = e.tenant_id AND a.id = e.actor_id), '')`.as("actor"),
  session_id: e.sessionId,
  git_commit: e.gitCommit,
  project: e.project,
  changeset_id: e.changesetId,
  metadata: e.metadata,
  revisit_after: e.revisitAfter,
  revisit_due: e.revisitDue,
  expires_when: e.expiresWhen,
  stale_when: e.staleWhen,
  supersedes: e.supersedes,
  constraint: e.constraint,
  superseded_by: sql<string>`COALESCE((SELECT s.id FROM events s WHERE s.tenant_id = e.tenant_id AND s.supersedes = e.id AND s.supersedes <> ''
            ORDER BY s.seq DESC LIMIT 1), '')`.as("superseded_by"),
} satisfies Record<keyof EventRowRaw, SQLiteColumn | SQL.Aliased>;

/**
 * eventFields as SQL text, for the FTS5 walk (substring-walk.ts), which stays hand SQL: drizzle
 * cannot say `events_fts MATCH` nor pin the join order with CROSS JOIN. One definition serves both.
 */
export const EVENT_COLUMNS = ((): string => {
  const parts = Object.entries(eventFields).map(([name, field]) => (is(field, SQL.Aliased) ? sql`${field.sql} AS ${sql.identifier(name)}` : sql`${field}`));
  const { sql: text, params } = new SQLiteAsyncDialect().sqlToQuery(sql.join(parts, sql`, `));
  if (params.length > 0) throw new Error("EVENT_COLUMNS must bind nothing: the walk numbers its own parameters");
  return text;
})();

export interface EventRowRaw {
  seq: number;
  id: string;
  timestamp: string;
  entity_path: string;
  entity_type: string;
  change_type: string;
  diff: string | null;
  reasoning: string | null;
  agent: string | null;
  actor: string | null;
  session_id: string | null;
  git_commit: string | null;
  project: string | null;
  changeset_id: string | null;
  metadata: string | null;
  revisit_after: string | null;
  revisit_due: string | null;
  expires_when: string | null;
  stale_when: string | null;
  supersedes: string | null;
  constraint: string | null;
  superseded_by: string | null;
}

/** Malformed metadata reads as {} rather than failing the whole read. */
function decodeMetadata(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function toEvent(r: EventRowRaw): EventWithSeq {
  return {
    seq: r.seq,
    id: r.id,
    timestamp: r.timestamp,
    entity_path: r.entity_path,
    entity_type: r.entity_type,
    change_type: r.change_type,
    diff: r.diff ?? "",
    reasoning: r.reasoning ?? "",
    agent: r.agent ?? "",
    actor: r.actor ?? "",
    session_id: r.session_id ?? "",
    git_commit: r.git_commit ?? "",
    project: r.project ?? "",
    changeset_id: r.changeset_id ?? "",
    metadata: decodeMetadata(r.metadata),
    revisit_after: r.revisit_after ?? "",
    expires_when: r.expires_when ?? "",
    stale_when: r.stale_when ?? "",
    supersedes: r.supersedes ?? "",
    constraint: r.constraint ?? "",
    superseded_by: r.superseded_by ?? "",
  };
}

/** Time order, same-time events in append order: history's order (an import keeps its original time). */
export const byHistory = (a: EventWithSeq, b: EventWithSeq): number => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.seq - b.seq);

/** Drops the internal `seq` before an event leaves the server. */
export function publicEvent({ seq: _seq, ...event }: EventWithSeq): ChangeEvent {
  return event;
}

const foreignCursor = (cursor: string) =>
  invalidInput(`cursor '${cursor.slice(0, 40)}' is not a cursor this server issued.`, "Pass next_cursor from a previous page unchanged, or omit cursor to start from the first page.");

/** Cursors are opaque to callers: the append position of the last event returned. */
export const encodeCursor = (seq: number): string => encodeKeyset([seq]);

export function decodeCursor(cursor: string | undefined): number | null {
  const key = decodeKeyset(cursor, 1);
  if (key === null) return null;
  if (typeof key[0] === "number" && Number.isSafeInteger(key[0]) && key[0] > 0) return key[0];
  throw foreignCursor(cursor!);
}

/** Records that a change-ledger tool was called on an entity (the stale_decisions "queried" signal). */
export function recordToolCall(ctx: Ctx, tool: string, entityPath: string): D1PreparedStatement {
  const row = { tenantId: ctx.tenantId, timestamp: iso(ctx.clock.now()), toolName: tool, entityPath, success: 1, errorMsg: "", actorId: ctx.actorId };
  // A plain statement: it rides in the first round trip of reads that stay hand SQL (FTS5).
  return insertToolCall(ctx.d1, row);
}

// Compiled once: every change-ledger read records itself.
const insertToolCall = compiledInsert(toolCalls);

export interface EventQuery {
  where: SQL[];
  order: "newest" | "oldest";
  limit: number;
  cursor?: string;
}

/**
 * A page of history is in time order, not append order: an imported event (src/changes/import)
 * is appended late but keeps its original time. Same-time events keep their append order.
 * The cursor is the last row's (timestamp, seq).
 */
function decodeHistoryCursor(cursor: string | undefined): [string, number] | null {
  const key = decodeKeyset(cursor, 2);
  if (key === null) return null;
  const [at, seq] = key;
  if (typeof at === "string" && typeof seq === "number" && Number.isSafeInteger(seq)) return [at, seq];
  throw foreignCursor(cursor!);
}

/** One page of events for tenant-scoped conditions, with the cursor for the next page. */
export function eventPageStatement(ctx: Ctx, q: EventQuery): { stmt: D1PreparedStatement; limit: number } {
  const after = decodeHistoryCursor(q.cursor);
  const where = [eq(e.tenantId, ctx.tenantId), ...q.where];
  if (after !== null) {
    const [at, seq] = after;
    where.push(q.order === "newest" ? or(lt(e.timestamp, at), and(eq(e.timestamp, at), lt(e.seq, seq)))! : or(gt(e.timestamp, at), and(eq(e.timestamp, at), gt(e.seq, seq)))!);
  }
  const query = dbOf(ctx)
    .select(eventFields)
    .from(e)
    .where(and(...where))
    .orderBy(...(q.order === "newest" ? [desc(e.timestamp), desc(e.seq)] : [asc(e.timestamp), asc(e.seq)]))
    // One extra row tells whether another page exists without a count query.
    .limit(q.limit + 1);
  return { stmt: statementOf(ctx.d1, query), limit: q.limit };
}

/** A page of eventPageStatement's rows, with its (timestamp, seq) cursor. */
export function historyPage(rows: EventRowRaw[], limit: number): { items: ChangeEvent[]; next_cursor?: string } {
  const events = rows.slice(0, limit).map(toEvent);
  const last = events[events.length - 1];
  return {
    items: events.map(publicEvent),
    ...(rows.length > limit && last ? { next_cursor: encodeKeyset([last.timestamp, last.seq]) } : {}),
  };
}

/** A page of rows walked in append order (change_search), with its seq cursor. */
export function pageFrom(rows: EventRowRaw[], limit: number): { items: ChangeEvent[]; next_cursor?: string } {
  const events = rows.slice(0, limit).map(toEvent);
  const last = events[events.length - 1];
  return {
    items: events.map(publicEvent),
    ...(rows.length > limit && last ? { next_cursor: encodeCursor(last.seq) } : {}),
  };
}

export interface EventFilters {
  entity_path?: string;
  project?: string;
  changeset_id?: string;
  /** An agent name, or "me" for the caller's own key. */
  agent?: string;
}

/**
 * SQL conditions for the optional filters the read tools share: entity path (exact or dotted
 * prefix, canonicalized), and exact project, changeset and agent. Blank values filter nothing.
 */
export function eventFilters(ctx: Pick<Ctx, "actorId">, f: EventFilters): { where: SQL[]; path: string } {
  const where: SQL[] = [];
  const path = f.entity_path?.trim() ? canonicalPath(f.entity_path) : "";
  if (path !== "") where.push(pathMatch(e.entityPath, path));
  // "me" is whoever holds the calling key, whatever agent names it logged under.
  const me = f.agent?.trim() === "me";
  const agent = me ? undefined : f.agent?.trim();
  if (me) where.push(eq(e.actorId, ctx.actorId));
  for (const [column, value] of [
    [e.project, f.project?.trim()],
    [e.changesetId, f.changeset_id?.trim()],
    [e.agent, agent],
  ] as const) {
    if (value) where.push(eq(column, value));
  }
  return { where, path };
}
