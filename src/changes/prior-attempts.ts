/**
 * prior_attempts: earlier attempts on an entity, each with an inferred outcome, so an agent
 * does not repeat a change that was already tried and undone. Deterministic and read-only.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import { dbOf, jsonValues, statementOf } from "../db/client";
import { events } from "../db/schema";
import type { Ctx } from "../core/context";
import { failureText, ToolError } from "../core/errors";
import { byHistory, e, eventFields, publicEvent, recordToolCall, toEvent, type ChangeEvent, type EventRowRaw, type EventWithSeq } from "./events";
import { LocalHashEmbedder } from "../search/embedder";
import { nearest, pendingEmbeddings, selectSemantic } from "../search/semantic";
import { VECTORIZE_LIMITS } from "../search/vector-index";
import { nameKeySql, pathMatch } from "./paths";
import { queryPath, statusOf, type DecisionStatus } from "./queries";
import { lowerAscii, walkContaining } from "./substring-walk";
import { EXPLICIT_REMOVALS, REMOVALS } from "./vocab";

export type Outcome = "reverted" | "reopened" | "rejected" | "active";
export type Confidence = "exact" | "proximity_high" | "proximity_low";
/** How a row was found: by entity_path, by description, by a near-identical name, or by meaning (fuzzy). */
export type MatchType = "exact" | "substring" | "near_name" | "fuzzy";

export type PriorAttempt = ChangeEvent & {
  outcome: Outcome;
  confidence: Confidence;
  outcome_reasoning: string;
  supersede_reasoning: string;
  current_status: DecisionStatus;
  match_type: MatchType;
  similarity: number;
  note: string;
};

export interface PriorAttemptsInput {
  entity_path?: string;
  description?: string;
  fuzzy?: string;
  min_confidence: "proximity_high" | "proximity_low";
  window_minutes: number;
  limit: number;
}

/** prior_attempts' default window: an add→remove pair within a week is proximity_high. */
export const DEFAULT_WINDOW_MINUTES = 10_080;

/** Paths whose history is read at most, and events per path: bounds the work per call. */
export const MAX_PATHS = 50;
const MAX_EVENTS = 5000;
/** Round trips spent looking for candidate paths by description. */
const MAX_WALK_BATCHES = 25;

const minutesBetween = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 60_000;

/** The seed's outcome_reasoning: the undoing event's own reasoning, verbatim ("" when it gave none). */
const removalReason = (removal: EventWithSeq): string => removal.reasoning;

/** Infers outcomes on one path's timeline (oldest first). Exported for unit tests. */
export function inferOutcomes(timeline: EventWithSeq[], byId: Map<string, EventWithSeq>, windowMinutes: number, matchType: MatchType): Array<PriorAttempt & { seq: number }> {
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
    const confidence: Confidence = EXPLICIT_REMOVALS.has(closing.change_type) ? "exact" : minutesBetween(attempt.timestamp, closing.timestamp) <= windowMinutes ? "proximity_high" : "proximity_low";
    out.push({
      ...publicEvent(attempt),
      seq: attempt.seq,
      ...base,
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
      ...publicEvent(e),
      seq: e.seq,
      ...base,
      outcome: e.superseded_by ? "reopened" : "rejected",
      confidence: "exact",
      outcome_reasoning: removalReason(e),
      supersede_reasoning: supersede?.reasoning ?? "",
    });
  }
  return out;
}

/** Rename hops followed back from a path: a path renamed more often than this is rare. */
const MAX_RENAME_HOPS = 5;

interface RenameLink {
  from: string;
  to: string;
  /** The create's place in time order (its append position until ranked): events on `from` before it belong to `to`. */
  seq: number;
}

/**
 * A rename is a pair of events: `rename` on the old path (metadata.renamed_to) and `create` on the
 * new one (metadata.renamed_from). Following those both ways, a path's events before it was renamed
 * join the timeline of its newest name, so an attempt made under an old name and undone under the new one (or the
 * reverse) is still inferred as undone. Returns every event, oldest first, and the timeline each
 * belongs to (the newest name of its path).
 */
async function followRenames(ctx: Ctx, initial: EventWithSeq[]): Promise<{ events: EventWithSeq[]; timelineOf: (e: EventWithSeq) => string }> {
  const events = new Map(initial.map((e) => [e.id, e]));
  const loaded = new Set(initial.map((e) => e.entity_path));
  const links: RenameLink[] = [];
  const linked = new Set<string>();
  for (let hop = 0; hop < MAX_RENAME_HOPS; hop++) {
    const fresh: RenameLink[] = [];
    for (const e of events.values()) {
      if (linked.has(e.id)) continue;
      // Back from the new path's create, and forward from the old path's rename.
      const { renamed_from: from, renamed_to: to } = e.metadata;
      if (e.change_type === "create" && typeof from === "string" && from !== "") fresh.push({ from, to: e.entity_path, seq: e.seq });
      else if (e.change_type === "rename" && typeof to === "string" && to !== "") fresh.push({ from: e.entity_path, to, seq: e.seq });
      else continue;
      linked.add(e.id);
    }
    if (fresh.length === 0) break;
    links.push(...fresh);
    const missing = [...new Set(fresh.flatMap((l) => [l.from, l.to]))].filter((p) => !loaded.has(p));
    if (missing.length === 0) continue;
    for (const p of missing) loaded.add(p);
    for (const r of await newestOnPaths(ctx, missing)) if (!events.has(r.id)) events.set(r.id, toEvent(r));
  }
  // From here `seq` is an event's rank in time order (byHistory), which is what "before" and
  // "after" mean on a timeline: an imported event is appended late but keeps its original time.
  const ordered = [...events.values()].sort(byHistory);
  const rank = new Map(ordered.map((e, i) => [e.seq, i + 1]));
  const ranked = ordered.map((e) => ({ ...e, seq: rank.get(e.seq)! }));
  for (const l of links) l.seq = rank.get(l.seq)!;
  const timelineOf = (e: EventWithSeq): string => {
    let path = e.entity_path;
    let at = e.seq;
    for (let hop = 0; hop <= MAX_RENAME_HOPS; hop++) {
      // The first rename away from this path after the event: later reuse of the old name stays its own.
      const next = links.filter((l) => l.from === path && l.seq > at).sort((a, b) => a.seq - b.seq)[0];
      if (!next) break;
      path = next.to;
      at = next.seq;
    }
    return path;
  };
  return { events: ranked, timelineOf };
}

/** Reads the newest events of the given exact paths, oldest first. */
async function readPaths(ctx: Ctx, paths: readonly string[]): Promise<EventRowRaw[]> {
  if (paths.length === 0) return [];
  return (await newestOnPaths(ctx, paths)).reverse();
}

/** The newest events on any of the exact paths, newest first. */
function newestOnPaths(ctx: Ctx, paths: readonly string[]): Promise<EventRowRaw[]> {
  return dbOf(ctx)
    .select(eventFields)
    .from(e)
    .where(and(eq(e.tenantId, ctx.tenantId), inArray(e.entityPath, jsonValues(paths))))
    .orderBy(desc(e.timestamp), desc(e.seq))
    .limit(MAX_EVENTS)
    .all();
}

type Ranked = PriorAttempt & { seq: number; timeline: string };

/** The attempts on the events read (through renames and supersedes), at the caller's confidence floor, newest first. */
async function attemptsOf(ctx: Ctx, rows: EventRowRaw[], input: PriorAttemptsInput, matchType: MatchType): Promise<Ranked[]> {
  if (rows.length === 0) return [];
  const { events, timelineOf } = await followRenames(ctx, rows.map(toEvent));
  const byId = new Map(events.map((e) => [e.id, e]));
  // A supersede may sit on a dotted parent of the removal it re-opens, outside the paths read
  // above: fetch those so the reopened attempt still carries the supersede's reasoning.
  const missing = [...new Set(events.map((e) => e.superseded_by).filter((id) => id !== "" && !byId.has(id)))];
  for (let i = 0; i < missing.length; i += 90) {
    const chunk = missing.slice(i, i + 90);
    const rows = await dbOf(ctx)
      .select(eventFields)
      .from(e)
      .where(and(eq(e.tenantId, ctx.tenantId), inArray(e.id, chunk)))
      .all();
    for (const r of rows) byId.set(r.id, toEvent(r));
  }
  const timelines = new Map<string, EventWithSeq[]>();
  for (const e of events) {
    const key = timelineOf(e);
    const list = timelines.get(key) ?? [];
    list.push(e);
    timelines.set(key, list);
  }
  const floor: ReadonlySet<Confidence> = input.min_confidence === "proximity_low" ? new Set(["exact", "proximity_high", "proximity_low"]) : new Set(["exact", "proximity_high"]);
  return [...timelines.entries()]
    .flatMap(([path, timeline]) =>
      inferOutcomes(timeline, byId, input.window_minutes, matchType).map((a) => ({
        ...a,
        timeline: path,
        ...(a.entity_path === path ? {} : { note: `an earlier path of ${path} (renamed or moved since)` }),
      })),
    )
    .filter((a) => floor.has(a.confidence))
    .sort((a, b) => b.seq - a.seq);
}

/**
 * Paths whose events mention `text` in their reasoning, diff or path, newest match first (the
 * walk also matches agent names, which do not count here).
 */
async function pathsMentioning(ctx: Ctx, text: string, withFirst: D1PreparedStatement[]): Promise<string[]> {
  const needle = lowerAscii(text.slice(0, 4096));
  const found = new Set<string>();
  await walkContaining(ctx, text.slice(0, 4096), {
    before: Number.MAX_SAFE_INTEGER,
    withFirst,
    maxBatches: MAX_WALK_BATCHES,
    take: (batch) => {
      for (const r of batch) {
        if (found.size >= MAX_PATHS) break;
        if ([r.reasoning, r.diff, r.entity_path].some((t) => lowerAscii(t ?? "").includes(needle))) found.add(r.entity_path);
      }
      return found.size < MAX_PATHS;
    },
  });
  return [...found];
}

/**
 * Other paths with the same name key as ?2 (see nameKeySql), in tenant ?1; a seek on migrations/0039's index.
 * Hand SQL: the key expression must be the index's text, and a query-plan test binds this statement by number.
 */
export const NEAR_NAMES_SQL = `SELECT DISTINCT entity_path FROM events WHERE tenant_id = ?1 AND ${nameKeySql("entity_path")} = ${nameKeySql("?2")} AND entity_path <> ?2 LIMIT ?3`;

/** Paths naming the same entity as `path`, spelled slightly differently. */
async function nearNames(ctx: Ctx, path: string): Promise<string[]> {
  const res = await ctx.d1.prepare(NEAR_NAMES_SQL).bind(ctx.tenantId, path, MAX_PATHS).all<{ entity_path: string }>();
  return res.results.map((r) => r.entity_path);
}

/** Why fuzzy found nothing on a server without Workers AI embeddings (wrangler dev, tests, self-hosting without AI). */
export const LOCAL_NO_MATCH =
  "the local embedder could not match by meaning (it compares shared words and word pieces; Workers AI embeddings match meaning), and no change event shares enough words with fuzzy";

/** Vector neighbours asked for per fuzzy query: hits collapse into fewer distinct paths. */
const fuzzyCandidates = (limit: number) => Math.min(VECTORIZE_LIMITS.maxTopK, Math.max(limit * 3, 30));

/**
 * The seed's fuzzy recall: change events nearest in meaning to `text` (path, change type and
 * reasoning are embedded), each distinct path run through the same outcome inference and marked
 * match_type "fuzzy" with its best similarity. Null when the semantic layer cannot answer, or
 * (`unmatched`) when the local embedder found nothing near.
 */
async function fuzzyAttempts(ctx: Ctx, text: string, input: PriorAttemptsInput, skip: { paths: Set<string> }): Promise<{ rows: Ranked[] | null; note: string; unmatched?: true }> {
  const { layer, reason } = selectSemantic(ctx.env);
  if (!layer) return { rows: null, note: reason };
  let near: { id: string; similarity: number }[];
  try {
    near = await nearest(layer, ctx.tenantId, text, { type: "change_event", topK: fuzzyCandidates(input.limit), minSimilarity: layer.embedder.minSimilarity });
  } catch (err) {
    const message = failureText(err, "prior_attempts vector query");
    console.warn(`[prior_attempts] vector query failed, falling back to substring: ${message}`);
    return { rows: null, note: `the embedder is unavailable (${message.slice(0, 200)})` };
  }
  const best = new Map<string, number>();
  if (near.length > 0) {
    // The tenant filter again: vector ids are only ever looked up within the caller's tenant.
    const hits = await dbOf(ctx)
      .select({ id: events.id, entityPath: events.entityPath })
      .from(events)
      .where(and(eq(events.tenantId, ctx.tenantId), inArray(events.id, jsonValues(near.map((n) => n.id)))))
      .all();
    const pathOf = new Map(hits.map((h) => [h.id, h.entityPath]));
    for (const n of near) {
      const path = pathOf.get(n.id);
      if (path === undefined || skip.paths.has(path) || best.has(path)) continue;
      if (best.size >= Math.min(input.limit, MAX_PATHS)) break;
      best.set(path, Math.round(n.similarity * 1000) / 1000);
    }
  }
  const pending = await pendingEmbeddings(ctx.d1, ctx.tenantId, "change_event").get();
  const note = pending && pending.n > 0 ? `${pending.n} change event(s) still waiting for an embedding are not matched by fuzzy until the backfill runs` : "";
  // The local embedder knows shared words, not meaning: nothing near is no proof that nothing is related.
  if (best.size === 0 && layer.embedder instanceof LocalHashEmbedder) return { rows: null, note: LOCAL_NO_MATCH + (note ? `; ${note}` : ""), unmatched: true };
  const rows = (await attemptsOf(ctx, await readPaths(ctx, [...best.keys()]), input, "fuzzy"))
    .map((a) => ({ ...a, similarity: Math.max(best.get(a.timeline) ?? 0, best.get(a.entity_path) ?? 0) }))
    // As the seed orders fuzzy rows: best match first, then oldest first.
    .sort((a, b) => b.similarity - a.similarity || a.seq - b.seq);
  return { rows, note };
}

/**
 * The attempts on these exact entity paths that were undone (reverted, or rejected outright),
 * newest first, inferred as prior_attempts infers them (renames and supersedes followed) at its
 * default confidence. task_claim answers them as the task's negative knowledge; no call is recorded.
 */
export async function undoneAttempts(ctx: Ctx, paths: readonly string[], limit: number): Promise<PriorAttempt[]> {
  const rows = await readPaths(ctx, paths.slice(0, MAX_PATHS));
  const attempts = await attemptsOf(ctx, rows, { min_confidence: "proximity_high", window_minutes: DEFAULT_WINDOW_MINUTES, limit }, "exact");
  return attempts
    .filter((a) => a.outcome === "reverted" || a.outcome === "rejected")
    .slice(0, limit)
    .map(({ seq: _seq, timeline: _timeline, ...a }) => a);
}

export interface PriorAttemptsResult {
  items: PriorAttempt[];
  note: string;
}

export async function priorAttempts(ctx: Ctx, input: PriorAttemptsInput): Promise<PriorAttemptsResult> {
  const hasPath = (input.entity_path ?? "").trim() !== "";
  const description = (input.description ?? "").trim();
  const fuzzy = (input.fuzzy ?? "").trim();
  if (!hasPath && description === "" && fuzzy === "") {
    throw new ToolError("missing_target", "prior_attempts requires entity_path, description, or fuzzy", {
      hint: "Pass entity_path (exact or dotted prefix, e.g. users), a free-text description of the change you plan, or fuzzy text to match by meaning.",
    });
  }

  // Groups in the order they are listed: exact matches first, then near-identical names, then by meaning.
  const groups: Ranked[][] = [];
  let note = "";
  const queried = hasPath ? queryPath(input.entity_path!) : "";
  const record = recordToolCall(ctx, "prior_attempts", queried);
  if (hasPath) {
    const newest = dbOf(ctx)
      .select(eventFields)
      .from(e)
      .where(and(eq(e.tenantId, ctx.tenantId), pathMatch(e.entityPath, queried)))
      .orderBy(desc(e.timestamp), desc(e.seq))
      .limit(MAX_EVENTS);
    // The newest events, read newest first and turned back into a timeline below.
    const [, res] = await ctx.d1.batch<EventRowRaw>([record, statementOf(ctx.d1, newest)]);
    groups.push(await attemptsOf(ctx, res!.results.reverse(), input, "exact"));
    groups.push(
      (await attemptsOf(ctx, await readPaths(ctx, await nearNames(ctx, queried)), input, "near_name")).map((a) => (a.note === "" ? { ...a, note: `a near-identical name of ${queried}` } : a)),
    );
  } else if (description !== "") {
    groups.push(await attemptsOf(ctx, await readPaths(ctx, await pathsMentioning(ctx, description, [record])), input, "substring"));
  } else {
    await record.run();
  }
  if (fuzzy !== "") {
    const skip = { paths: new Set(groups.flat().flatMap((a) => [a.entity_path, a.timeline])) };
    const found = await fuzzyAttempts(ctx, fuzzy, input, skip);
    if (found.rows) {
      groups.push(found.rows);
      note = found.note;
    } else {
      // As the seed does without its semantic extra: substring matching, and a note saying so.
      note = found.unmatched ? `${found.note}; fell back to substring` : `fuzzy matching unavailable (${found.note}); fell back to substring`;
      groups.push(
        await attemptsOf(
          ctx,
          await readPaths(
            ctx,
            (await pathsMentioning(ctx, fuzzy, [])).filter((p) => !skip.paths.has(p)),
          ),
          input,
          "substring",
        ),
      );
    }
  }
  const seen = new Set<string>();
  const items = groups
    .flat()
    .filter((a) => !seen.has(a.id) && seen.add(a.id))
    .slice(0, input.limit)
    .map(({ seq: _seq, timeline: _timeline, ...a }) => a);
  return { items, note };
}
