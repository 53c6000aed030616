/** The change ledger's plain reads: change_diff, blame, change_history, changeset, change_search. */
import { resolveSince } from "../core/time";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { and, desc, eq, gte, type SQL } from "drizzle-orm";
import { compiled } from "../db/client";
import { e, eventFields, eventPageStatement, historyPage, pageFrom, publicEvent, recordToolCall, toEvent, type ChangeEvent, type EventRowRaw, decodeCursor, eventFilters } from "./events";
import { canonicalPath, pathMatch } from "./paths";
import { walkContaining } from "./substring-walk";
import { REMOVALS } from "./vocab";

export interface Page {
  items: ChangeEvent[];
  next_cursor?: string;
}

/** Like canonicalPath, but an empty query path is the caller's mistake. */
export function queryPath(raw: string): string {
  const path = canonicalPath(raw);
  if (path === "") {
    throw new ToolError("invalid_entity_path", "entity_path must be a non-empty string", {
      hint: "Pass the entity to look up, e.g. users.email or src/auth.py::login.",
    });
  }
  return path;
}

export async function changeDiff(ctx: Ctx, input: { entity_path: string; limit: number; cursor?: string }): Promise<Page> {
  const path = queryPath(input.entity_path);
  const { stmt, limit } = eventPageStatement(ctx, { where: [pathMatch(e.entityPath, path)], order: "newest", limit: input.limit, cursor: input.cursor });
  const [, rows] = await ctx.d1.batch<EventRowRaw>([recordToolCall(ctx, "change_diff", path), stmt]);
  return historyPage(rows!.results, limit);
}

export type DecisionStatus = "active" | "reverted" | "reopened" | "no_history";

/** A path's decision status follows its latest event. */
export function statusOf(changeType: string | undefined): DecisionStatus {
  if (changeType === undefined) return "no_history";
  if (REMOVALS.has(changeType)) return "reverted";
  return changeType === "supersede" ? "reopened" : "active";
}

export type BlameResult = ChangeEvent & { status: DecisionStatus; error: string };

const EMPTY_EVENT: ChangeEvent = {
  id: "",
  timestamp: "",
  entity_path: "",
  entity_type: "",
  change_type: "",
  diff: "",
  reasoning: "",
  agent: "",
  actor: "",
  session_id: "",
  git_commit: "",
  project: "",
  changeset_id: "",
  metadata: {},
  revisit_after: "",
  expires_when: "",
  stale_when: "",
  supersedes: "",
  constraint: "",
  superseded_by: "",
};

/**
 * The latest event on an exact path by time (shared with the benchmark's plain route): an imported
 * event keeps its original time, so it is not the latest over a newer one logged before the import.
 */
export const blameStatement = (d1: D1Database, tenantId: string, path: string): D1PreparedStatement => latestOnPath(d1, { tenantId, path });

// Compiled once: blame is the read agents call most.
const latestOnPath = compiled(["tenantId", "path"], (db, p) =>
  db
    .select(eventFields)
    .from(e)
    .where(and(eq(e.tenantId, p.tenantId), eq(e.entityPath, p.path)))
    .orderBy(desc(e.timestamp), desc(e.seq))
    .limit(1),
);

export async function blame(ctx: Ctx, input: { entity_path: string }): Promise<BlameResult> {
  const path = queryPath(input.entity_path);
  const [, res] = await ctx.d1.batch<EventRowRaw>([recordToolCall(ctx, "blame", path), blameStatement(ctx.d1, ctx.tenantId, path)]);
  const row = res!.results[0];
  if (!row) return { ...EMPTY_EVENT, status: "no_history", error: `No history found for '${path}'` };
  return { ...publicEvent(toEvent(row)), status: statusOf(row.change_type), error: "" };
}

export async function changeHistory(ctx: Ctx, input: { since?: string; entity_path?: string; project?: string; changeset_id?: string; limit: number; cursor?: string }): Promise<Page> {
  const where: SQL[] = [];
  const since = resolveSince(input.since ?? "", ctx.clock.now());
  if (since === null) {
    throw new ToolError("invalid_since", `could not parse '${input.since}' as a relative time (e.g. '7d', '24h', '15m', '5mo', '1y') or ISO 8601 timestamp`, {
      hint: "Use a relative window such as 15m, 24h, 7d, 5mo or 1y (m = minutes, mo = months), or an ISO-8601 time such as 2026-11-01T00:00:00Z.",
    });
  }
  if (since !== "") where.push(gte(e.timestamp, since));
  const filters = eventFilters(ctx, input);
  where.push(...filters.where);
  const { stmt, limit } = eventPageStatement(ctx, { where, order: "newest", limit: input.limit, cursor: input.cursor });
  const [, rows] = await ctx.d1.batch<EventRowRaw>([recordToolCall(ctx, "change_history", filters.path), stmt]);
  return historyPage(rows!.results, limit);
}

export async function changeset(ctx: Ctx, input: { changeset_id: string; limit: number; cursor?: string }): Promise<Page & { error: string }> {
  const id = input.changeset_id.trim();
  if (id === "") {
    throw new ToolError("invalid_changeset_id", "changeset_id must be a non-empty string", { hint: "Pass the changeset slug used in log_change." });
  }
  const { stmt, limit } = eventPageStatement(ctx, { where: [eq(e.changesetId, id)], order: "oldest", limit: input.limit, cursor: input.cursor });
  const [, rows] = await ctx.d1.batch<EventRowRaw>([recordToolCall(ctx, "changeset", ""), stmt]);
  const page = historyPage(rows!.results, limit);
  const empty = page.items.length === 0 && input.cursor === undefined;
  return { ...page, error: empty ? `No events found for changeset '${id}'` : "" };
}

export const SEARCH_QUERY_MAX = 4096;

/**
 * Substring search over entity_path, diff, reasoning and agent, newest first, with `_`, `%`
 * and `\` matched literally and ASCII case folded (LIKE's semantics, without LIKE: D1 caps
 * LIKE patterns at 50 bytes). Index-backed for three or more characters (see substring-walk).
 */
export async function changeSearch(ctx: Ctx, input: { query: string; limit: number; cursor?: string }): Promise<Page> {
  const query = input.query.slice(0, SEARCH_QUERY_MAX);
  if (query.trim() === "") {
    throw new ToolError("invalid_query", "query must be a non-empty string", { hint: "Pass the text to look for." });
  }
  const limit = input.limit;
  const found: EventRowRaw[] = [];
  await walkContaining(ctx, query, {
    before: decodeCursor(input.cursor) ?? Number.MAX_SAFE_INTEGER,
    withFirst: [recordToolCall(ctx, "change_search", "")],
    take: (rows) => {
      found.push(...rows);
      return found.length <= limit;
    },
  });
  return pageFrom(found.slice(0, limit + 1), limit);
}
