/** Decisions (seed 001): decision_log, decision_set_status, decision_query. Append-only by design. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { and, desc, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, fromColumnNames, jsonValues, statementOf } from "../../db/client";
import { decisions } from "../../db/schema";
import { jsonArray } from "../shared";
import { parseStale, staleColumn, staleSchema } from "../memory/model";

export const DECISION_STATUSES = ["proposed", "accepted", "rejected"] as const;

export const optionSchema = z.object({
  label: z.string().trim().min(1).max(200).describe("The option's name."),
  summary: z.string().max(2000).optional().describe("What it is."),
  pros: z.array(z.string().min(1).max(500)).max(20).optional().describe("Arguments for."),
  cons: z.array(z.string().min(1).max(500)).max(20).optional().describe("Arguments against."),
});

export const decisionSchema = z.object({
  id: z.string().describe("Decision id."),
  project_id: z.string().nullable().describe("Project, or null for a tenant-wide decision."),
  title: z.string().describe("What was decided about."),
  choice: z.string().describe("What was chosen."),
  context: z.string().describe("The situation."),
  rationale: z.string().describe("Why."),
  options: z
    .array(
      z.object({
        label: z.string().describe("Option."),
        summary: z.string().describe("What it is."),
        pros: z.array(z.string()).describe("For."),
        cons: z.array(z.string()).describe("Against."),
      }),
    )
    .describe("The options weighed."),
  status: z.enum(DECISION_STATUSES).describe("proposed, accepted or rejected."),
  supersedes_decision_id: z.string().nullable().describe("The decision this one replaces, or null."),
  superseded_by: z.string().nullable().describe("The latest decision that replaces this one, or null."),
  created_by: z.string().describe("Actor that logged it."),
  created_at: z.string().describe("When it was logged."),
  status_changed_at: z.string().describe("When the status last moved."),
  stale: staleSchema.describe("The push that changed one of its linked paths since it was logged or confirmed (decision_set_status, even to the same status, clears it), or null."),
});
export type Decision = z.infer<typeof decisionSchema>;

/** Decisions as the room's reads name them: `d`, which the superseded_by subquery and the FTS5 search's hand SQL correlate with. */
const d = alias(decisions, "d");

/** A decision row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const decisionFields = {
  seq: d.seq,
  id: d.id,
  project_id: d.projectId,
  title: d.title,
  choice: d.choice,
  context: d.context,
  rationale: d.rationale,
  options: d.options,
  status: d.status,
  supersedes_decision_id: d.supersedesDecisionId,
  created_by: d.createdBy,
  created_at: d.createdAt,
  status_changed_at: d.statusChangedAt,
  // Written out: in a single-table select drizzle drops table names inside fields, and this subquery needs `d.` to correlate.
  superseded_by: sql<string | null>`(SELECT s.id FROM decisions s WHERE s.tenant_id = d.tenant_id AND s.supersedes_decision_id = d.id ORDER BY s.seq DESC LIMIT 1)`.as("superseded_by"),
  stale: staleColumn("d", "decision"),
};

export type DecisionRow = Omit<Decision, "options" | "stale"> & { seq: number; options: string; stale: string | null };

export function toDecision({ seq: _seq, ...r }: DecisionRow): Decision {
  const options = jsonArray<z.infer<typeof optionSchema>>(r.options).map((o) => ({ label: o.label, summary: o.summary ?? "", pros: o.pros ?? [], cons: o.cons ?? [] }));
  return { ...r, options, stale: parseStale(r.stale) };
}

export async function findDecision(ctx: Ctx, id: string): Promise<Decision> {
  const row = await dbOf(ctx)
    .select(decisionFields)
    .from(d)
    .where(and(eq(d.tenantId, ctx.tenantId), eq(d.id, id)))
    .get();
  if (!row) throw notFound("decision", id, "decision_query lists decisions.");
  return toDecision(row as DecisionRow);
}

/** A new decision row, keyed by SQL column name (as the chain hashes it); joins the batch that chains it. */
export function insertDecisionStatement(ctx: Ctx, row: Record<string, unknown>): D1PreparedStatement {
  return statementOf(ctx.d1, dbOf(ctx).insert(decisions).values(fromColumnNames(decisions, row)));
}

/** Which decisions a query reads: the caller's tenant, narrowed by what the caller asked for. */
export interface DecisionFilter {
  projectId?: string;
  statuses?: string[];
  /** Logged at or after this time (ISO-8601). */
  since?: string;
  /** Listing only: the cursor's position, to read the decisions logged before it. */
  beforeSeq?: string | number | null;
}

function decisionWhere(ctx: Ctx, f: DecisionFilter): SQL {
  return and(
    eq(d.tenantId, ctx.tenantId),
    f.projectId ? eq(d.projectId, f.projectId) : undefined,
    f.statuses?.length ? inArray(d.status, f.statuses) : undefined,
    f.since ? gte(d.createdAt, f.since) : undefined,
    f.beforeSeq !== undefined ? lt(d.seq, f.beforeSeq as number) : undefined,
  )!;
}

/** Decision ids matching an FTS query within the filter, best match first. */
export async function searchDecisionIds(ctx: Ctx, f: DecisionFilter, match: string, limit: number): Promise<string[]> {
  // Hand SQL: drizzle cannot say `decisions_fts MATCH` nor order by bm25().
  const rows = await dbOf(ctx).all<{ id: string }>(
    sql`SELECT d.id FROM decisions_fts f JOIN decisions d ON d.seq = f.rowid
        WHERE decisions_fts MATCH ${match} AND ${decisionWhere(ctx, f)} ORDER BY bm25(decisions_fts), d.seq DESC LIMIT ${limit}`,
  );
  return rows.map((r) => r.id);
}

/** The decisions among `ids` that pass the filter. */
export async function listDecisionsByIds(ctx: Ctx, f: DecisionFilter, ids: string[]): Promise<DecisionRow[]> {
  return (await dbOf(ctx)
    .select(decisionFields)
    .from(d)
    .where(and(decisionWhere(ctx, f), inArray(d.id, jsonValues(ids))))
    .all()) as DecisionRow[];
}

/** A page of decisions that pass the filter, newest first. */
export async function listDecisions(ctx: Ctx, f: DecisionFilter, limit: number): Promise<DecisionRow[]> {
  return (await dbOf(ctx).select(decisionFields).from(d).where(decisionWhere(ctx, f)).orderBy(desc(d.seq)).limit(limit).all()) as DecisionRow[];
}

/** Compare-and-swap of a decision's status; returns its id only when `from` still held. */
export function setDecisionStatusStatement(ctx: Ctx, id: string, from: string, to: string, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(decisions)
      .set({ status: to, statusChangedAt: now })
      .where(and(eq(decisions.tenantId, ctx.tenantId), eq(decisions.id, id), eq(decisions.status, from)))
      .returning({ id: decisions.id }),
  );
}
