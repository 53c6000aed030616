/** Decisions (seed 001): decision_log, decision_set_status, decision_query. Append-only by design. */
import { z } from "zod";
import { appendChained } from "../../changes/chain";
import { ftsQuery } from "../../db/fts";
import { uuidv7 } from "../../db/ids";
import { iso, resolveSince } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { rankHybrid } from "../../search/rank";
import { embedAfterResponse, queueEmbedding } from "../../search/semantic";
import { decisionEmbedText } from "../../search/sources";
import { activityStatement, cursorField, decodeKeyset, jsonArray, limitField, keysetPage } from "../shared";
import { findProject } from "../projects/model";

export const DECISION_STATUSES = ["proposed", "accepted", "rejected"] as const;

const optionSchema = z.object({
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
  options: z.array(z.object({
    label: z.string().describe("Option."), summary: z.string().describe("What it is."),
    pros: z.array(z.string()).describe("For."), cons: z.array(z.string()).describe("Against."),
  })).describe("The options weighed."),
  status: z.enum(DECISION_STATUSES).describe("proposed, accepted or rejected."),
  supersedes_decision_id: z.string().nullable().describe("The decision this one replaces, or null."),
  superseded_by: z.string().nullable().describe("The latest decision that replaces this one, or null."),
  created_by: z.string().describe("Actor that logged it."),
  created_at: z.string().describe("When it was logged."),
  status_changed_at: z.string().describe("When the status last moved."),
});
export type Decision = z.infer<typeof decisionSchema>;

const DECISION_COLUMNS = `d.seq, d.id, d.project_id, d.title, d.choice, d.context, d.rationale, d.options, d.status, d.supersedes_decision_id,
  d.created_by, d.created_at, d.status_changed_at,
  (SELECT s.id FROM decisions s WHERE s.tenant_id = d.tenant_id AND s.supersedes_decision_id = d.id ORDER BY s.seq DESC LIMIT 1) AS superseded_by`;

type DecisionRow = Omit<Decision, "options"> & { seq: number; options: string };

function toDecision({ seq: _seq, ...r }: DecisionRow): Decision {
  const options = jsonArray<z.infer<typeof optionSchema>>(r.options).map((o) => ({ label: o.label, summary: o.summary ?? "", pros: o.pros ?? [], cons: o.cons ?? [] }));
  return { ...r, options };
}

async function findDecision(ctx: Ctx, id: string): Promise<Decision> {
  const row = await ctx.d1.prepare(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE d.tenant_id = ? AND d.id = ?`).bind(ctx.tenantId, id).first<DecisionRow>();
  if (!row) throw notFound("decision", id, "decision_query lists decisions.");
  return toDecision(row);
}

export const decisionLogTool = defineTool({
  name: "decision_log",
  title: "Log a decision",
  toolset: "decisions",
  description:
    "Append a decision; to change one, log a new one that supersedes it.",
  input: z.object({
    title: z.string().trim().min(1).max(300).describe("What was decided about."),
    choice: z.string().trim().min(1).max(4000).describe("What was chosen."),
    context: z.string().max(20_000).optional().describe("The situation that called for it."),
    rationale: z.string().max(20_000).optional().describe("Why this choice."),
    options: z.array(optionSchema).max(20).optional().describe("The options weighed, with pros and cons."),
    project_id: z.string().min(1).max(100).optional().describe("Project id or key; omit for a tenant-wide decision."),
    status: z.enum(DECISION_STATUSES).default("accepted").describe("Status."),
    supersedes_decision_id: z.string().min(1).max(100).optional().describe("The decision this one replaces."),
  }),
  output: z.object({ decision: decisionSchema.describe("The logged decision.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const project = input.project_id ? await findProject(ctx, input.project_id) : null;
    const superseded = input.supersedes_decision_id ? await findDecision(ctx, input.supersedes_decision_id) : null;
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    // Embedded on write for recall by meaning: queued in the same batch, made after the response.
    const embedRef = { tenantId: ctx.tenantId, type: "decision" as const, id };
    const text = decisionEmbedText({ title: input.title, choice: input.choice, context: input.context ?? "", rationale: input.rationale ?? "" });
    const row = {
      id, tenant_id: ctx.tenantId, project_id: project?.id ?? superseded?.project_id ?? null, title: input.title, choice: input.choice,
      context: input.context ?? "", rationale: input.rationale ?? "", options: JSON.stringify(input.options ?? []), status: input.status,
      supersedes_decision_id: superseded?.id ?? null, created_by: ctx.actorId, created_at: now, status_changed_at: now,
    };
    const columns = Object.keys(row) as Array<keyof typeof row>;
    // The decision and its link in the tenant's tamper-evident chain are written together.
    await appendChained(ctx.d1, ctx.tenantId, now, [
      ctx.d1.prepare(`INSERT INTO decisions (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).bind(...columns.map((c) => row[c])),
      activityStatement(ctx, {
        verb: superseded ? "decision.superseded" : "decision.logged", objectType: "decision", objectId: id,
        projectId: project?.id ?? superseded?.project_id ?? null, summary: `${input.title}: ${input.choice}`.slice(0, 300),
        metadata: superseded ? { supersedes: superseded.id } : {},
      }),
      await queueEmbedding(ctx.d1, embedRef, text, ctx.clock.now()),
    ], [{ kind: "decision", row }]);
    embedAfterResponse(ctx, [embedRef]);
    return { decision: await findDecision(ctx, id) };
  },
  summarize: (r) => `Logged decision ${r.decision.id}: ${r.decision.title}.`,
});

export const decisionSetStatusTool = defineTool({
  name: "decision_set_status",
  title: "Set a decision's status",
  toolset: "decisions",
  description: "Move a decision's status; its content stays as logged.",
  input: z.object({
    decision_id: z.string().min(1).max(100).describe("The decision."),
    status: z.enum(DECISION_STATUSES).describe("The new status."),
  }),
  output: z.object({ decision: decisionSchema.describe("The decision after the change."), changed: z.boolean().describe("False when it already had that status.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const before = await findDecision(ctx, input.decision_id);
    if (before.status === input.status) return { decision: before, changed: false };
    const now = iso(ctx.clock.now());
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1.prepare(`UPDATE decisions SET status = ?, status_changed_at = ? WHERE tenant_id = ? AND id = ? AND status = ? RETURNING id`)
        .bind(input.status, now, ctx.tenantId, before.id, before.status),
      activityStatement(ctx, {
        verb: `decision.${input.status}`, objectType: "decision", objectId: before.id, projectId: before.project_id,
        summary: `${before.title}: ${before.status} → ${input.status}`, ifPreviousChanged: true,
      }),
    ]);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The decision's status changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    return { decision: await findDecision(ctx, before.id), changed: true };
  },
  summarize: (r) => `${r.decision.title} is ${r.decision.status}.`,
});

export const decisionQueryTool = defineTool({
  name: "decision_query",
  title: "Find decisions",
  toolset: "decisions",
  description:
    "Search decisions by words (and meaning), or list them newest first.",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Project id or key."),
    q: z.string().max(500).optional().describe("Words to look for (every word must appear)."),
    semantic: z.boolean().default(false).describe("With q: rank by meaning too."),
    status: z.array(z.enum(DECISION_STATUSES)).max(3).optional().describe("Only these statuses."),
    since: z.string().max(64).optional().describe("Only since (24h, 7d, … or ISO-8601)."),
    top_k: z.number().int().min(1).max(100).optional().describe("With q: at most this many results (default 20)."),
    min_similarity: z.number().min(-1).max(1).optional().describe("Semantic: drop matches below this cosine similarity."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(decisionSchema.extend({
      similarity: z.number().nullable().optional().describe("Semantic mode: cosine similarity to q, or null when only the words matched."),
    })).describe("Decisions."),
    mode: z.enum(["hybrid", "lexical", "list"]).describe("How results were found: hybrid (words and meaning), lexical (words), list (no q)."),
    note: z.string().describe("Anything the caller should know about the ranking, or \"\"."),
    next_cursor: z.string().optional().describe("Listing only: pass as cursor for the next page."),
  }),
  fields: true,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["d.tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    if (projectId) { where.push("d.project_id = ?"); params.push(projectId); }
    if (input.status?.length) { where.push(`d.status IN (${input.status.map(() => "?").join(", ")})`); params.push(...input.status); }
    if (input.since) {
      const since = resolveSince(input.since, ctx.clock.now());
      if (since === null) throw invalidInput(`could not parse since '${input.since}'`, "Use 15m, 24h, 7d, 5mo, 1y or an ISO-8601 time.");
      if (since) { where.push("d.created_at >= ?"); params.push(since); }
    }
    const q = input.q?.trim() ?? "";
    if (q) {
      const match = ftsQuery(q, "Use letters or digits in q, or omit it to list decisions.");
      if (input.cursor) throw invalidInput("cursor pages listings only, not searches.", "Drop cursor, or raise top_k for more search results.");
      const topK = input.top_k ?? 20;
      const ranked = await rankHybrid({
        env: ctx.env, tenantId: ctx.tenantId, type: "decision", q, semantic: input.semantic, minSimilarity: input.min_similarity,
        // Status and time are filtered after ranking (status moves, so it is not vector metadata).
        candidates: Math.min(100, topK * 3),
        filter: projectId ? { project_id: projectId } : undefined,
        lexical: async () => {
          const rows = await ctx.d1
            .prepare(`SELECT d.id FROM decisions_fts f JOIN decisions d ON d.seq = f.rowid
                      WHERE decisions_fts MATCH ? AND ${where.join(" AND ")} ORDER BY bm25(decisions_fts), d.seq DESC LIMIT ?`)
            .bind(match, ...params, input.semantic ? 100 : topK)
            .raw<[string]>();
          return rows.map((r) => r[0]);
        },
      });
      const ids = ranked.items.map((r) => r.id);
      const rows = ids.length === 0 ? [] : (await ctx.d1
        .prepare(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${where.join(" AND ")} AND d.id IN (SELECT value FROM json_each(?))`)
        .bind(...params, JSON.stringify(ids))
        .all<DecisionRow>()).results;
      const byId = new Map(rows.map((r) => [r.id, r]));
      const items = ranked.items.filter((r) => byId.has(r.id)).slice(0, topK)
        .map((r) => ({ ...toDecision(byId.get(r.id)!), ...(ranked.mode === "hybrid" ? { similarity: r.similarity } : {}) }));
      return { items, mode: ranked.mode, note: ranked.note };
    }
    const note = input.semantic ? "semantic ranking needs q; this is the newest-first listing" : "";
    const after = decodeKeyset(input.cursor, 1);
    if (after) { where.push("d.seq < ?"); params.push(after[0]); }
    const rows = await ctx.d1
      .prepare(`SELECT ${DECISION_COLUMNS} FROM decisions d WHERE ${where.join(" AND ")} ORDER BY d.seq DESC LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<DecisionRow>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.seq]);
    return {
      items: page.map(toDecision), mode: "list" as const, note,
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} decision(s) (${r.mode}).`,
});
