/** Decisions (seed 001): decision_log, decision_set_status, decision_query. Append-only by design. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { jsonArray } from "../shared";

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
});
export type Decision = z.infer<typeof decisionSchema>;

export const DECISION_COLUMNS = `d.seq, d.id, d.project_id, d.title, d.choice, d.context, d.rationale, d.options, d.status, d.supersedes_decision_id,
  d.created_by, d.created_at, d.status_changed_at,
  (SELECT s.id FROM decisions s WHERE s.tenant_id = d.tenant_id AND s.supersedes_decision_id = d.id ORDER BY s.seq DESC LIMIT 1) AS superseded_by`;

export type DecisionRow = Omit<Decision, "options"> & { seq: number; options: string };

export function toDecision({ seq: _seq, ...r }: DecisionRow): Decision {
  const options = jsonArray<z.infer<typeof optionSchema>>(r.options).map((o) => ({ label: o.label, summary: o.summary ?? "", pros: o.pros ?? [], cons: o.cons ?? [] }));
  return { ...r, options };
}

export async function findDecision(ctx: Ctx, id: string): Promise<Decision> {
  const row = await ctx.d1.prepare(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE d.tenant_id = ? AND d.id = ?`).bind(ctx.tenantId, id).first<DecisionRow>();
  if (!row) throw notFound("decision", id, "decision_query lists decisions.");
  return toDecision(row);
}

/** A new decision row; joins the batch that chains it. */
export function insertDecisionStatement(ctx: Ctx, row: Record<string, unknown>): D1PreparedStatement {
  const columns = Object.keys(row);
  return ctx.d1.prepare(`INSERT INTO decisions (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).bind(...columns.map((c) => row[c]));
}

/** Decision ids matching an FTS query within the filter (`where` over alias d), best match first. */
export async function searchDecisionIds(ctx: Ctx, where: string[], params: unknown[], match: string, limit: number): Promise<string[]> {
  const rows = await ctx.d1
    .prepare(
      `SELECT d.id FROM decisions_fts f JOIN decisions d ON d.seq = f.rowid
                      WHERE decisions_fts MATCH ? AND ${where.join(" AND ")} ORDER BY bm25(decisions_fts), d.seq DESC LIMIT ?`,
    )
    .bind(match, ...params, limit)
    .raw<[string]>();
  return rows.map((r) => r[0]);
}

/** The decisions among `ids` that pass the filter. */
export async function listDecisionsByIds(ctx: Ctx, where: string[], params: unknown[], ids: string[]): Promise<DecisionRow[]> {
  return (
    await ctx.d1
      .prepare(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${where.join(" AND ")} AND d.id IN (SELECT value FROM json_each(?))`)
      .bind(...params, JSON.stringify(ids))
      .all<DecisionRow>()
  ).results;
}

/** A page of decisions that pass the filter, newest first. */
export async function listDecisions(ctx: Ctx, where: string[], params: unknown[], limit: number): Promise<DecisionRow[]> {
  return (
    await ctx.d1
      .prepare(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${where.join(" AND ")} ORDER BY d.seq DESC LIMIT ?`)
      .bind(...params, limit)
      .all<DecisionRow>()
  ).results;
}

/** Compare-and-swap of a decision's status; returns its id only when `from` still held. */
export function setDecisionStatusStatement(ctx: Ctx, id: string, from: string, to: string, now: string): D1PreparedStatement {
  return ctx.d1.prepare(`UPDATE decisions SET status = ?, status_changed_at = ? WHERE tenant_id = ? AND id = ? AND status = ? RETURNING id`).bind(to, now, ctx.tenantId, id, from);
}
