/**
 * Negative knowledge at claim time: what was tried on a task's paths and undone, and the decisions
 * about those paths that were rejected or superseded. task_claim answers it beside the claim.
 */
import { and, desc, eq, gte, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { clip } from "../../core/text";
import { undoneAttempts, MAX_PATHS } from "../../changes/prior-attempts";
import { dbOf, statementOf } from "../../db/client";
import { codeRefs, events, memoryPaths, pathReservations } from "../../db/schema";
import { listDecisionsByIds } from "../decisions/model";
import { isGlob, matcherOf, patternsOverlap } from "../reservations/globs";
import { filePart, literalPrefix } from "./model";

/** Entries answered at most. */
export const MAX_PRIOR_ENTRIES = 10;
/** Patterns of the task looked up, entity paths read per pattern, decision links compared. */
const MAX_TASK_PATTERNS = 20;
const PATHS_PER_PATTERN = 200;
const MAX_DECISION_LINKS = 1000;
/** Pattern-by-pattern comparisons spent finding the decisions of the task's paths. */
const COMPARE_BUDGET = 20_000;
const TEXT_MAX = 300;

export const priorEntrySchema = z.object({
  source: z.enum(["change", "decision"]).describe("A change-ledger event, or a work decision."),
  id: z.string().describe("Its id."),
  path: z.string().describe("The entity path (change), or the linked path or glob (decision)."),
  outcome: z.enum(["reverted", "rejected", "superseded"]).describe("How it ended."),
  summary: z.string().describe("What was tried or decided."),
  reason: z.string().describe('Why it was undone or set aside, or "".'),
  at: z.string().describe("When."),
});
export type PriorEntry = z.infer<typeof priorEntrySchema>;

interface TaskPattern {
  repositoryId: string;
  pattern: string;
}

/**
 * The task's paths, in one round trip: the paths linked to its code refs, the patterns of path
 * reservations tied to it (released ones too: they say where the work was), and the entity paths
 * of change events logged under its changeset (its ref or id, as the guide asks agents to use).
 */
async function taskPaths(ctx: Ctx, task: { id: string; ref: string }): Promise<{ patterns: TaskPattern[]; entityPaths: string[] }> {
  const db = dbOf(ctx);
  const refs = db
    .select({ id: codeRefs.id })
    .from(codeRefs)
    .where(and(eq(codeRefs.tenantId, ctx.tenantId), eq(codeRefs.objectType, "task"), eq(codeRefs.objectId, task.id), isNull(codeRefs.deletedAt)));
  const [linked, reserved, logged] = await ctx.d1.batch<{ repository_id?: string; pattern?: string; entity_path?: string }>([
    statementOf(
      ctx.d1,
      db
        .select({ repository_id: memoryPaths.repositoryId, pattern: memoryPaths.pattern })
        .from(memoryPaths)
        .where(and(eq(memoryPaths.tenantId, ctx.tenantId), eq(memoryPaths.objectType, "code_ref"), inArray(memoryPaths.objectId, refs)))
        .limit(MAX_TASK_PATTERNS),
    ),
    statementOf(
      ctx.d1,
      db
        .selectDistinct({ repository_id: pathReservations.repositoryId, pattern: pathReservations.pattern })
        .from(pathReservations)
        .where(and(eq(pathReservations.tenantId, ctx.tenantId), eq(pathReservations.taskId, task.id)))
        .limit(MAX_TASK_PATTERNS),
    ),
    statementOf(
      ctx.d1,
      db
        // `+` keeps SQLite from walking the tenant's whole path index in order to skip the DISTINCT's
        // sort: the changeset index seeks the task's few events instead.
        .selectDistinct({ entity_path: sql<string>`+${events.entityPath}`.as("entity_path") })
        .from(events)
        .where(and(eq(events.tenantId, ctx.tenantId), inArray(events.changesetId, [task.ref, task.id])))
        .limit(MAX_PATHS),
    ),
  ]);
  const seen = new Set<string>();
  const patterns: TaskPattern[] = [];
  for (const r of [...linked!.results, ...reserved!.results]) {
    const key = `${r.repository_id}\n${r.pattern}`;
    if (seen.has(key) || patterns.length >= MAX_TASK_PATTERNS) continue;
    seen.add(key);
    patterns.push({ repositoryId: r.repository_id!, pattern: r.pattern! });
  }
  return { patterns, entityPaths: logged!.results.map((r) => r.entity_path!) };
}

/**
 * Entity paths of change events a task's patterns cover (the file part of `file::symbol`): a seek
 * on events' path index from each pattern's literal start, or the newest events for a pattern
 * that starts with a wildcard.
 */
async function coveredEntityPaths(ctx: Ctx, patterns: readonly string[]): Promise<string[]> {
  if (patterns.length === 0) return [];
  const db = dbOf(ctx);
  const e = events;
  const lookups = patterns.map((p) => {
    const prefix = literalPrefix(p);
    const where = isGlob(p)
      ? prefix === ""
        ? undefined
        : and(gte(e.entityPath, prefix), lt(e.entityPath, `${prefix}\u{10FFFF}`))
      : or(eq(e.entityPath, p), and(gte(e.entityPath, `${p}::`), lt(e.entityPath, `${p}:;`)));
    const query =
      where === undefined
        ? db.select({ entity_path: e.entityPath }).from(e).where(eq(e.tenantId, ctx.tenantId)).orderBy(desc(e.seq)).limit(PATHS_PER_PATTERN)
        : db
            .selectDistinct({ entity_path: e.entityPath })
            .from(e)
            .where(and(eq(e.tenantId, ctx.tenantId), where))
            .limit(PATHS_PER_PATTERN);
    return statementOf(ctx.d1, query);
  });
  const results = await ctx.d1.batch<{ entity_path: string }>(lookups);
  const out = new Set<string>();
  patterns.forEach((p, i) => {
    const matches = matcherOf(p);
    for (const r of results[i]!.results) if (out.size < MAX_PATHS && matches(filePart(r.entity_path))) out.add(r.entity_path);
  });
  return [...out];
}

/** Work decisions linked to paths that meet the task's, rejected or superseded, with the linked pattern that met. */
async function setAsideDecisions(ctx: Ctx, patterns: readonly TaskPattern[], files: readonly string[]): Promise<PriorEntry[]> {
  const links = await dbOf(ctx)
    .select({ id: memoryPaths.objectId, repository_id: memoryPaths.repositoryId, pattern: memoryPaths.pattern })
    .from(memoryPaths)
    .where(and(eq(memoryPaths.tenantId, ctx.tenantId), eq(memoryPaths.objectType, "decision")))
    .limit(MAX_DECISION_LINKS)
    .all();
  if (links.length === 0) return [];
  let budget = COMPARE_BUDGET;
  const met = new Map<string, string>();
  for (const l of links) {
    if (met.has(l.id)) continue;
    const matches = matcherOf(l.pattern);
    // Files of the task's change events carry no repository: any linked repository's pattern may cover them.
    const hit = patterns.some((p) => p.repositoryId === l.repository_id && budget-- > 0 && patternsOverlap(l.pattern, p.pattern)) || files.some((f) => budget-- > 0 && matches(f));
    if (hit) met.set(l.id, l.pattern);
    if (budget <= 0) break;
  }
  if (met.size === 0) return [];
  const rows = await listDecisionsByIds(ctx, {}, [...met.keys()]);
  return rows
    .filter((d) => d.status === "rejected" || d.superseded_by !== null)
    .map((d) => ({
      source: "decision" as const,
      id: d.id,
      path: met.get(d.id)!,
      outcome: d.superseded_by !== null ? ("superseded" as const) : ("rejected" as const),
      summary: clip(`${d.title}: ${d.choice}`, TEXT_MAX),
      reason: d.superseded_by !== null ? `superseded by decision ${d.superseded_by}` : clip(d.rationale, TEXT_MAX),
      at: d.status_changed_at,
    }));
}

/**
 * What was tried on the task's paths and undone, and the decisions about them set aside, newest
 * first, at most MAX_PRIOR_ENTRIES. A task with no paths costs the one lookup of its paths.
 */
export async function priorAttemptsForTask(ctx: Ctx, task: { id: string; ref: string }): Promise<PriorEntry[]> {
  const { patterns, entityPaths } = await taskPaths(ctx, task);
  if (patterns.length === 0 && entityPaths.length === 0) return [];
  const covered = await coveredEntityPaths(ctx, [...new Set(patterns.map((p) => p.pattern))]);
  const paths = [...new Set([...entityPaths, ...covered])];
  const attempts = paths.length > 0 ? await undoneAttempts(ctx, paths, MAX_PRIOR_ENTRIES) : [];
  const changes: PriorEntry[] = attempts.map((a) => ({
    source: "change",
    id: a.id,
    path: a.entity_path,
    outcome: a.outcome === "rejected" ? "rejected" : "reverted",
    summary: clip(a.reasoning ? `${a.change_type}: ${a.reasoning}` : a.change_type, TEXT_MAX),
    reason: clip(a.outcome_reasoning, TEXT_MAX),
    at: a.timestamp,
  }));
  const decisions = await setAsideDecisions(ctx, patterns, [...new Set(entityPaths.map(filePart))]);
  return [...changes, ...decisions].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, MAX_PRIOR_ENTRIES);
}
