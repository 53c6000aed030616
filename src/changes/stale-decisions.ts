/**
 * stale_decisions: decisions that have come due and whose entity is still in use. Pure age
 * never surfaces a decision: it needs a sign of life (queried since, or changeset activity),
 * an expiry condition that fired, or a stale_when condition echoed by later work.
 */
import { and, asc, desc, eq, gt, gte, inArray, notExists, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, statementOf } from "../db/client";
import { events, toolCalls } from "../db/schema";
import { iso } from "../core/time";
import type { Ctx } from "../core/context";
import { e, eventFields, eventFilters, publicEvent, recordToolCall, toEvent, type ChangeEvent, type EventRowRaw, type EventWithSeq } from "./events";
import { parseExpiresWhen, type ExpiresCondition } from "./expires";
import { dottedAncestors, pathMatch } from "./paths";
import { QUERY_SIGNAL_TOOLS } from "./vocab";
import { describeStale, liveMarkIds, parseStale, staleColumn, type Stale } from "../work/memory/model";

export type StaleFlag = "expired" | "revisit_due" | "review_suggested" | "manual_review";

export type StaleDecision = ChangeEvent & {
  flag: StaleFlag;
  revisit_due: string;
  days_overdue: number;
  active_use_signals: string[];
  matched_terms: string[];
  matched_event_id: string;
  expires_status: "" | "expired" | "not_expired" | "manual_review";
  expired_pattern: string;
  expires_detail: string;
  stale_reason: string;
};

export interface StaleInput {
  entity_path?: string;
  project?: string;
  agent?: string;
  limit: number;
}

/** Decisions examined per call, and recent events scanned for stale_when echoes. */
const MAX_DECISIONS = 1000;
const ECHO_WINDOW = 500;
const DAY_MS = 86_400_000;

const STOPWORDS = new Set(
  "about above after again against also because been before being below between both could does doing down during each from further have having here into itself just more most once only other over same should some such than that their them then there these they this those through under until very were what when where which while will with would your when".split(
    " ",
  ),
);

/** Lowercased word tokens of four or more characters, minus stopwords. */
export function keywordTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const t of text.toLowerCase().split(/[^\p{L}\p{N}_]+/u)) if (t.length >= 4 && !STOPWORDS.has(t)) out.add(t);
  return out;
}

interface Candidate {
  event: EventWithSeq;
  revisitDue: string;
  changesetActivity: boolean;
  /** A push that changed the decision's file since it was logged. */
  pushed: Stale;
}

const PRECEDENCE: Record<StaleFlag, number> = { expired: 0, revisit_due: 1, review_suggested: 2, manual_review: 3 };

/**
 * Whose stale decisions, as of when. The tool passes its caller; the daily sweep passes a tenant
 * with no caller, so `record` is optional: the sweep is not someone querying the ledger.
 */
export interface StaleScope {
  d1: D1Database;
  tenantId: string;
  /** Resolves agent "me"; "" when nobody is calling. */
  actorId: string;
  now: Date;
  record?: (entityPath: string) => D1PreparedStatement;
}

export function staleDecisions(ctx: Ctx, input: StaleInput): Promise<StaleDecision[]> {
  return evaluateStaleDecisions({ d1: ctx.d1, tenantId: ctx.tenantId, actorId: ctx.actorId, now: ctx.clock.now(), record: (path) => recordToolCall(ctx, "stale_decisions", path) }, input);
}

export async function evaluateStaleDecisions(scope: StaleScope, input: StaleInput): Promise<StaleDecision[]> {
  const now = scope.now;
  const nowIso = iso(now);
  const db = dbOf(scope);
  const filters = eventFilters(scope, input);
  const path = filters.path;
  const later = alias(events, "n");
  const supersede = alias(events, "s");
  // `<> ''` stays literal throughout: the partial indexes on revisit_due and supersedes are WHERE col <> ''.
  const decisions = db
    .select({
      ...eventFields,
      // Written out: drizzle drops table names inside a single-table select's fields, and this subquery correlates on `e.`.
      changeset_activity: sql<number>`(e.changeset_id <> '' AND EXISTS (SELECT 1 FROM events c WHERE c.tenant_id = e.tenant_id
              AND c.changeset_id = e.changeset_id AND c.seq > e.seq))`.as("changeset_activity"),
      stale: staleColumn("e", "change_event"),
    })
    .from(e)
    .where(
      and(
        eq(e.tenantId, scope.tenantId),
        // Only decisions that could surface now: due dates already passed, or a condition to evaluate.
        // …or a push changed its file since (src/work/memory): the code moved under it.
        sql`((${e.revisitDue} <> '' AND ${e.revisitDue} <= ${nowIso}) OR ${e.expiresWhen} <> '' OR ${e.staleWhen} <> '' OR ${e.id} IN ${liveMarkIds(scope.tenantId, "change_event")})`,
        ...filters.where,
        // A decision stops being "the" decision once a newer event on the same entity carries its own
        // decision fields, or once a supersede re-opens it.
        notExists(
          db
            .select({ one: sql`1` })
            .from(later)
            .where(
              and(eq(later.tenantId, e.tenantId), eq(later.entityPath, e.entityPath), gt(later.seq, e.seq), sql`(${later.revisitDue} <> '' OR ${later.expiresWhen} <> '' OR ${later.staleWhen} <> '')`),
            ),
        ),
        notExists(
          db
            .select({ one: sql`1` })
            .from(supersede)
            .where(and(eq(supersede.tenantId, e.tenantId), eq(supersede.supersedes, e.id), sql`${supersede.supersedes} <> ''`)),
        ),
      ),
    )
    .orderBy(asc(e.seq))
    .limit(MAX_DECISIONS);

  const recorded = scope.record ? [scope.record(path)] : [];
  const results = await scope.d1.batch<EventRowRaw & { changeset_activity: number; stale: string | null }>([
    ...recorded,
    statementOf(scope.d1, decisions),
    statementOf(
      scope.d1,
      db
        .select({ seq: events.seq, id: events.id, entity_path: events.entityPath, reasoning: events.reasoning, diff: events.diff })
        .from(events)
        .where(eq(events.tenantId, scope.tenantId))
        .orderBy(desc(events.seq))
        .limit(ECHO_WINDOW),
    ),
  ]);
  const [decisionsRes, recentRes] = results.slice(recorded.length);
  const candidates: Candidate[] = decisionsRes!.results.map((r) => ({
    event: toEvent(r),
    revisitDue: r.revisit_due ?? "",
    changesetActivity: Boolean(r.changeset_activity),
    pushed: parseStale(r.stale),
  }));
  if (candidates.length === 0) return [];
  const recent = recentRes!.results as unknown as Array<{ seq: number; id: string; entity_path: string; reasoning: string; diff: string }>;

  // The "queried" signal and entity expiries need one lookup per decision: send them as one batch.
  const lookups: Array<{ kind: "queried" | "entity"; index: number; stmt: D1PreparedStatement }> = [];
  const conditions = candidates.map((c) => (c.event.expires_when ? parseStoredCondition(c.event.expires_when) : null));
  candidates.forEach((c, index) => {
    if (c.revisitDue !== "" && c.revisitDue <= nowIso) lookups.push({ kind: "queried", index, stmt: queriedStatement(scope, c.event) });
    const cond = conditions[index];
    if (cond?.kind === "entity") {
      const changed = db
        .select({ id: e.id })
        .from(e)
        .where(and(eq(e.tenantId, scope.tenantId), gt(e.seq, c.event.seq), pathMatch(e.entityPath, cond.path)))
        .orderBy(asc(e.seq))
        .limit(1);
      lookups.push({ kind: "entity", index, stmt: statementOf(scope.d1, changed) });
    }
  });
  const answers = lookups.length > 0 ? await scope.d1.batch<{ id?: string }>(lookups.map((l) => l.stmt)) : [];
  const queried = new Set<number>();
  const entityFired = new Map<number, string>();
  lookups.forEach((l, i) => {
    const row = answers[i]!.results[0];
    if (!row) return;
    if (l.kind === "queried") queried.add(l.index);
    else entityFired.set(l.index, row.id ?? "");
  });

  const out: StaleDecision[] = [];
  candidates.forEach((c, index) => {
    const e = c.event;
    const signals = [...(queried.has(index) ? ["queried"] : []), ...(c.changesetActivity ? ["changeset_activity"] : []), ...(c.pushed ? ["code_changed"] : [])];
    const flags: StaleFlag[] = [];
    const dueNow = c.revisitDue !== "" && c.revisitDue <= nowIso;
    if (dueNow && signals.length > 0) flags.push("revisit_due");

    let matchedTerms: string[] = [];
    let matchedEventId = "";
    if (e.stale_when) {
      const wanted = keywordTokens(e.stale_when);
      for (const later of recent) {
        if (later.seq <= e.seq) continue;
        const have = keywordTokens(`${later.entity_path} ${later.reasoning} ${later.diff}`);
        const shared = [...wanted].filter((t) => have.has(t));
        if (shared.length >= 2 && shared.length > matchedTerms.length) {
          matchedTerms = shared.sort();
          matchedEventId = later.id;
        }
      }
      if (matchedTerms.length >= 2) flags.push("review_suggested");
    }
    // Code pushed over the decision's file is later work on it, as a stale_when echo is.
    if (c.pushed && !flags.includes("review_suggested")) flags.push("review_suggested");

    const cond = conditions[index];
    let expiresStatus: StaleDecision["expires_status"] = "";
    let expiresDetail = "";
    if (cond) {
      const judged = judgeExpiry(cond, nowIso, entityFired.get(index));
      expiresStatus = judged.status;
      expiresDetail = judged.detail;
      if (judged.status === "expired") flags.push("expired");
      if (judged.status === "manual_review") flags.push("manual_review");
    }
    if (flags.length === 0) return;
    const flag = flags.sort((a, b) => PRECEDENCE[a] - PRECEDENCE[b])[0]!;
    const daysOverdue = dueNow ? Math.floor((now.getTime() - Date.parse(c.revisitDue)) / DAY_MS) : 0;
    out.push({
      ...publicEvent(e),
      flag,
      revisit_due: c.revisitDue,
      days_overdue: Math.max(0, daysOverdue),
      active_use_signals: signals,
      matched_terms: matchedTerms,
      matched_event_id: matchedEventId,
      expires_status: expiresStatus,
      expired_pattern: expiresStatus === "expired" ? e.expires_when : "",
      expires_detail: expiresDetail,
      stale_reason: staleReason(flag, signals, matchedTerms, expiresDetail, c.pushed),
    });
  });

  // Due-dated rows first, most overdue first; then condition-only rows in decision order.
  const dated = (d: StaleDecision) => d.flag === "revisit_due" || (d.revisit_due !== "" && d.revisit_due <= nowIso);
  return out
    .sort((a, b) => {
      const da = dated(a);
      const db = dated(b);
      if (da !== db) return da ? -1 : 1;
      if (da && a.revisit_due !== b.revisit_due) return a.revisit_due < b.revisit_due ? -1 : 1;
      return a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0;
    })
    .slice(0, input.limit);
}

/**
 * A blame, change_diff or prior_attempts call since the decision on this entity (exact), on a
 * dotted ancestor, or on a dotted descendant. Ancestors travel as one JSON array so a path with
 * many dots cannot exceed D1's 100 bound parameters; descendants avoid LIKE, which D1 refuses
 * for patterns over 50 bytes (see pathMatchSql).
 */
function queriedStatement(scope: StaleScope, decision: EventWithSeq): D1PreparedStatement {
  const path = toolCalls.entityPath;
  const query = dbOf(scope)
    .select({ hit: sql<number>`1`.as("hit") })
    .from(toolCalls)
    .where(
      and(
        eq(toolCalls.tenantId, scope.tenantId),
        gte(toolCalls.timestamp, decision.timestamp),
        inArray(toolCalls.toolName, QUERY_SIGNAL_TOOLS as readonly string[] as string[]),
        or(
          eq(path, decision.entity_path),
          sql`${path} COLLATE NOCASE IN (SELECT value FROM json_each(${JSON.stringify(dottedAncestors(decision.entity_path))}))`,
          sql`(${path} COLLATE NOCASE >= ${decision.entity_path} AND ${path} COLLATE NOCASE < ${`${decision.entity_path}/`} AND substr(${path}, length(${decision.entity_path}) + 1, 1) = '.')`,
        ),
      ),
    )
    .limit(1);
  return statementOf(scope.d1, query);
}

function parseStoredCondition(text: string): ExpiresCondition | null {
  try {
    return parseExpiresWhen(text);
  } catch {
    return null; // a stored condition that no longer parses is skipped, never fatal
  }
}

function judgeExpiry(cond: ExpiresCondition, nowIso: string, laterEventId: string | undefined): { status: StaleDecision["expires_status"]; detail: string } {
  switch (cond.kind) {
    case "date":
      return cond.at <= nowIso ? { status: "expired", detail: `the date ${cond.at} has passed` } : { status: "not_expired", detail: `expires at ${cond.at}` };
    case "entity":
      return laterEventId !== undefined
        ? { status: "expired", detail: `${cond.path} changed after the decision (event ${laterEventId})` }
        : { status: "not_expired", detail: `no change to ${cond.path} since the decision` };
    case "library":
      return {
        status: "manual_review",
        detail: `the server cannot observe installed versions of ${cond.name}; check whether it has reached ${cond.version}`,
      };
    case "manual":
      return { status: "not_expired", detail: `manual condition '${cond.label}' never fires by itself` };
  }
}

function staleReason(flag: StaleFlag, signals: string[], terms: string[], expiresDetail: string, pushed: Stale): string {
  const signal: Record<string, string> = {
    queried: "the entity was queried (blame/diff/prior_attempts) after the decision",
    changeset_activity: "its changeset saw later activity",
    code_changed: pushed ? describeStale(pushed) : "",
  };
  switch (flag) {
    case "expired":
      return `its expiry condition fired: ${expiresDetail}.`;
    case "revisit_due":
      return `past its revisit date and still active — ${signals.map((s) => signal[s]).join(", and ")}.`;
    case "review_suggested": {
      const why = [...(terms.length >= 2 ? [`later work mentions its stale_when condition (${terms.join(", ")})`] : []), ...(pushed ? [describeStale(pushed)] : [])];
      return `${why.join("; ")}.`;
    }
    case "manual_review":
      return `its expiry condition needs a person to check: ${expiresDetail}.`;
  }
}
