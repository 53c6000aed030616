/**
 * prior_attempts: earlier attempts on an entity, each with an inferred outcome, so an agent
 * does not repeat a change that was already tried and undone. Deterministic and read-only.
 */
import type { Ctx } from "../mcp/context";
import { ToolError } from "../mcp/errors";
import { EVENT_COLUMNS, publicEvent, recordToolCall, toEvent, type ChangeEvent, type EventRowRaw, type EventWithSeq } from "./events";
import { pathMatchSql } from "./paths";
import { queryPath, statusOf, type DecisionStatus } from "./queries";
import { lowerAscii, walkContaining } from "./substring-walk";
import { EXPLICIT_REMOVALS, REMOVALS } from "./vocab";

export type Outcome = "reverted" | "reopened" | "rejected" | "active";
export type Confidence = "exact" | "proximity_high" | "proximity_low";

export type PriorAttempt = ChangeEvent & {
  outcome: Outcome;
  confidence: Confidence;
  outcome_reasoning: string;
  supersede_reasoning: string;
  current_status: DecisionStatus;
  match_type: "exact" | "substring";
  similarity: number;
  note: string;
};

export interface PriorAttemptsInput {
  entity_path?: string;
  description?: string;
  min_confidence: "proximity_high" | "proximity_low";
  window_minutes: number;
  limit: number;
}

/** Paths whose history is read at most, and events per path: bounds the work per call. */
const MAX_PATHS = 50;
const MAX_EVENTS = 5000;
/** Round trips spent looking for candidate paths by description. */
const MAX_WALK_BATCHES = 25;

const minutesBetween = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 60_000;

/** The seed's outcome_reasoning: the undoing event's own reasoning, verbatim ("" when it gave none). */
const removalReason = (removal: EventWithSeq): string => removal.reasoning;

/** Infers outcomes on one path's timeline (oldest first). Exported for unit tests. */
export function inferOutcomes(
  timeline: EventWithSeq[],
  byId: Map<string, EventWithSeq>,
  windowMinutes: number,
  matchType: "exact" | "substring",
): Array<PriorAttempt & { seq: number }> {
  const out: Array<PriorAttempt & { seq: number }> = [];
  const currentStatus = statusOf(timeline[timeline.length - 1]?.change_type);
  const closedSomething = new Set<string>();
  const base = { current_status: currentStatus, match_type: matchType, similarity: 0, note: "" };

  for (let i = 0; i < timeline.length; i++) {
    const attempt = timeline[i]!;
    if (REMOVALS.has(attempt.change_type) || attempt.change_type === "supersede" || attempt.change_type === "rename") continue;
    const closing = timeline.slice(i + 1).find((e) => REMOVALS.has(e.change_type));
    if (!closing) {
      out.push({ ...publicEvent(attempt), seq: attempt.seq, ...base, outcome: "active", confidence: "proximity_low", outcome_reasoning: "", supersede_reasoning: "" });
      continue;
    }
    closedSomething.add(closing.id);
    const supersede = closing.superseded_by ? byId.get(closing.superseded_by) : undefined;
    const confidence: Confidence = EXPLICIT_REMOVALS.has(closing.change_type)
      ? "exact"
      : minutesBetween(attempt.timestamp, closing.timestamp) <= windowMinutes ? "proximity_high" : "proximity_low";
    out.push({
      ...publicEvent(attempt), seq: attempt.seq, ...base,
      outcome: closing.superseded_by ? "reopened" : "reverted",
      confidence,
      outcome_reasoning: removalReason(closing),
      superseded_by: closing.superseded_by,
      supersede_reasoning: supersede?.reasoning ?? "",
    });
  }
  // A reject that closed no attempt is a decision in its own right: "we considered X and said no".
  for (const e of timeline) {
    if (e.change_type !== "reject" || closedSomething.has(e.id)) continue;
    const supersede = e.superseded_by ? byId.get(e.superseded_by) : undefined;
    out.push({
      ...publicEvent(e), seq: e.seq, ...base,
      outcome: e.superseded_by ? "reopened" : "rejected",
      confidence: "exact",
      outcome_reasoning: removalReason(e),
      supersede_reasoning: supersede?.reasoning ?? "",
    });
  }
  return out;
}

export async function priorAttempts(ctx: Ctx, input: PriorAttemptsInput): Promise<PriorAttempt[]> {
  const hasPath = (input.entity_path ?? "").trim() !== "";
  const description = (input.description ?? "").trim();
  if (!hasPath && description === "") {
    throw new ToolError("missing_target", "prior_attempts requires entity_path or description", {
      hint: "Pass entity_path (exact or dotted prefix, e.g. users) or a free-text description of the change you plan.",
    });
  }

  let rows: EventRowRaw[];
  let matchType: "exact" | "substring";
  if (hasPath) {
    const path = queryPath(input.entity_path!);
    const match = pathMatchSql(path);
    const [, res] = await ctx.d1.batch<EventRowRaw>([
      recordToolCall(ctx, "prior_attempts", path),
      // The newest events, read newest first and turned back into a timeline below.
      ctx.d1.prepare(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.tenant_id = ? AND ${match.sql} ORDER BY e.seq DESC LIMIT ?`)
        .bind(ctx.tenantId, ...match.params, MAX_EVENTS),
    ]);
    rows = res!.results.reverse();
    matchType = "exact";
  } else {
    // Candidate paths, newest match first: the description must appear in the reasoning,
    // diff or path (the walk also matches agent names, which do not count here).
    const needle = lowerAscii(description.slice(0, 4096));
    const found = new Set<string>();
    await walkContaining(ctx, description.slice(0, 4096), {
      before: Number.MAX_SAFE_INTEGER,
      withFirst: [recordToolCall(ctx, "prior_attempts", "")],
      maxBatches: MAX_WALK_BATCHES,
      take: (batch) => {
        for (const r of batch) {
          if (found.size >= MAX_PATHS) break;
          if ([r.reasoning, r.diff, r.entity_path].some((t) => lowerAscii(t ?? "").includes(needle))) found.add(r.entity_path);
        }
        return found.size < MAX_PATHS;
      },
    });
    const paths = [...found];
    if (paths.length === 0) return [];
    const res = await ctx.d1
      .prepare(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.tenant_id = ? AND e.entity_path IN (${paths.map(() => "?").join(", ")}) ORDER BY e.seq DESC LIMIT ?`)
      .bind(ctx.tenantId, ...paths, MAX_EVENTS)
      .all<EventRowRaw>();
    rows = res.results.reverse();
    matchType = "substring";
  }

  const events = rows.map(toEvent);
  const byId = new Map(events.map((e) => [e.id, e]));
  // A supersede may sit on a dotted parent of the removal it re-opens, outside the paths read
  // above: fetch those so the reopened attempt still carries the supersede's reasoning.
  const missing = [...new Set(events.map((e) => e.superseded_by).filter((id) => id !== "" && !byId.has(id)))];
  for (let i = 0; i < missing.length; i += 90) {
    const chunk = missing.slice(i, i + 90);
    const res = await ctx.d1
      .prepare(`SELECT ${EVENT_COLUMNS} FROM events e WHERE e.tenant_id = ? AND e.id IN (${chunk.map(() => "?").join(", ")})`)
      .bind(ctx.tenantId, ...chunk)
      .all<EventRowRaw>();
    for (const r of res.results) byId.set(r.id, toEvent(r));
  }
  const timelines = new Map<string, EventWithSeq[]>();
  for (const e of events) {
    const list = timelines.get(e.entity_path) ?? [];
    list.push(e);
    timelines.set(e.entity_path, list);
  }
  const floor: ReadonlySet<Confidence> =
    input.min_confidence === "proximity_low" ? new Set(["exact", "proximity_high", "proximity_low"]) : new Set(["exact", "proximity_high"]);
  const attempts = [...timelines.values()]
    .flatMap((timeline) => inferOutcomes(timeline, byId, input.window_minutes, matchType))
    .filter((a) => floor.has(a.confidence))
    .sort((a, b) => b.seq - a.seq)
    .slice(0, input.limit);
  return attempts.map(({ seq: _seq, ...a }) => a);
}
