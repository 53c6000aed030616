/** Product feedback (seed 001): what gets in an agent's way, filed for this server's operators, and its lifecycle. */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import { secretKinds } from "../../core/secrets";
import { defineTool } from "../../core/define-tool";
import { notFound, ToolError } from "../../core/errors";
import { activityStatement, cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import type { Ctx } from "../../core/context";

export const FEEDBACK_KINDS = ["bug", "friction", "capability", "docs"] as const;
export const FEEDBACK_STATUSES = ["open", "accepted", "in_progress", "shipped", "declined"] as const;
const LIVE_SQL = "('open', 'accepted', 'in_progress')";

const requestSchema = z.object({
  id: z.string().describe("Request id."),
  title: z.string().describe("Title."),
  body: z.string().describe("Details."),
  kind: z.enum(FEEDBACK_KINDS).describe("bug, friction, capability or docs."),
  severity: z.enum(["low", "medium", "high"]).describe("low, medium or high."),
  tool_name: z.string().describe("The tool involved, or \"\"."),
  error_code: z.string().describe("The error code seen, or \"\"."),
  context: z.string().describe("What the agent was doing, or \"\"."),
  fingerprint: z.string().nullable().describe("De-duplication key, or null."),
  status: z.enum(FEEDBACK_STATUSES).describe("open → accepted → in_progress → shipped | declined."),
  resolution_note: z.string().describe("The operators' note, or \"\"."),
  occurrences: z.number().int().describe("How many times it was filed while live."),
  actor_id: z.string().describe("Who filed it first."),
  created_at: z.string().describe("When."),
  updated_at: z.string().describe("Last change."),
});
type Request = z.infer<typeof requestSchema>;
type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];

const historyEntrySchema = z.object({
  from_status: z.enum(FEEDBACK_STATUSES).describe("The status before the move."),
  to_status: z.enum(FEEDBACK_STATUSES).describe("The status after it."),
  note: z.string().describe("The operator's note with the move, or \"\"."),
  actor_id: z.string().describe("The operator who moved it."),
  at: z.string().describe("When."),
});
type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** The seed's path; declined ends it from any live status, and shipped and declined are final. */
const PATH: readonly FeedbackStatus[] = ["open", "accepted", "in_progress", "shipped"];
const isLive = (s: FeedbackStatus) => s === "open" || s === "accepted" || s === "in_progress";

/** Why a request may not move from one status to another, or null when it may. */
function transitionProblem(from: FeedbackStatus, to: FeedbackStatus): string | null {
  if (!isLive(from)) return `it is ${from}, which is final`;
  if (to === "declined") return null;
  if (PATH.indexOf(to) <= PATH.indexOf(from)) return `${to} comes before ${from} on open → accepted → in_progress → shipped`;
  return null;
}

async function historyOf(ctx: Ctx, requestId: string): Promise<HistoryEntry[]> {
  const rows = await ctx.d1
    .prepare(`SELECT from_status, to_status, note, actor_id, at FROM feature_request_events WHERE tenant_id = ? AND request_id = ? ORDER BY seq LIMIT 200`)
    .bind(ctx.tenantId, requestId)
    .all<HistoryEntry>();
  return rows.results;
}

async function findRequest(ctx: Ctx, id: string): Promise<Request> {
  const row = await ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id).first<Request & { seq: number }>();
  if (!row) throw notFound("feature request", id, "feature_request_query lists your tenant's requests with their ids.");
  const { seq: _seq, ...request } = row;
  return request;
}
const COLUMNS = "seq, id, title, body, kind, severity, tool_name, error_code, context, fingerprint, status, resolution_note, occurrences, actor_id, created_at, updated_at";

export const featureRequestCreateTool = defineTool({
  name: "feature_request_create",
  title: "File product feedback",
  toolset: "feedback",
  // Feedback leaves the tenant for the operators, so secret-shaped text is refused outright, not masked.
  secrets: "handler",
  description:
    "File a bug, friction or missing capability in this server the moment you hit it. The title and body are shared with the server's operators: never put secrets or client-confidential content in them (secret-looking text is refused). A fingerprint de-duplicates: filing the same live request again counts an occurrence instead of a new request.",
  input: z.object({
    title: z.string().trim().min(1).max(200).describe("What is wrong or missing, in a line."),
    body: z.string().max(8000).optional().describe("Details: what you did, what happened, what you expected."),
    kind: z.enum(FEEDBACK_KINDS).describe("bug, friction, capability or docs."),
    severity: z.enum(["low", "medium", "high"]).default("medium").describe("low, medium (default) or high."),
    tool_name: z.string().max(100).optional().describe("The tool involved."),
    error_code: z.string().max(100).optional().describe("The error code you got."),
    context: z.string().max(2000).optional().describe("What you were trying to do."),
    fingerprint: z.string().min(1).max(200).optional().describe("De-duplication key (e.g. tool:error_code)."),
  }),
  output: z.object({ request: requestSchema.describe("The request."), deduplicated: z.boolean().describe("True when a live request with this fingerprint was counted instead.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const kinds = secretKinds([input.title, input.body ?? "", input.context ?? ""].join("\n"));
    if (kinds.length > 0) {
      throw new ToolError("secret_in_feedback", `The request looks like it contains a secret (${kinds.join(", ")}); it was not filed.`, {
        hint: "Remove credentials and confidential data, describe the problem in general terms, and file again.",
      });
    }
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    const [inserted] = await ctx.d1.batch<{ id: string }>([
      ctx.d1
        .prepare(
          `INSERT INTO feature_requests (id, tenant_id, actor_id, title, body, kind, severity, tool_name, error_code, context, fingerprint, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
        )
        .bind(id, ctx.tenantId, ctx.actorId, input.title, input.body ?? "", input.kind, input.severity, input.tool_name ?? "", input.error_code ?? "",
          input.context ?? "", input.fingerprint ?? null, now, now),
      // Filing a live duplicate again counts an occurrence (only when the insert above did nothing).
      ctx.d1
        .prepare(`UPDATE feature_requests SET occurrences = occurrences + 1, updated_at = ?
                  WHERE tenant_id = ? AND fingerprint = ? AND status IN ${LIVE_SQL} AND id <> ?`)
        .bind(now, ctx.tenantId, input.fingerprint ?? "", id),
    ]);
    const created = inserted!.results.length > 0;
    const row = created
      ? await ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE id = ?`).bind(id).first<Request & { seq: number }>()
      : await ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE tenant_id = ? AND fingerprint = ? AND status IN ${LIVE_SQL}`).bind(ctx.tenantId, input.fingerprint ?? "").first<Request & { seq: number }>();
    if (!row) throw notFound("feature request", id, "Retry the call.");
    const { seq: _seq, ...request } = row;
    return { request, deduplicated: !created };
  },
  summarize: (r) => (r.deduplicated ? `Counted another occurrence of ${r.request.id}.` : `Filed ${r.request.kind} ${r.request.id}.`),
});

export const featureRequestQueryTool = defineTool({
  name: "feature_request_query",
  title: "Read filed feedback",
  toolset: "feedback",
  description: "Your tenant's filed requests with their current status (open → accepted → in_progress → shipped | declined) and the operators' resolution notes, newest first: how a filer learns the outcome. With id, the request's history of status moves too.",
  input: z.object({
    id: z.string().min(1).max(100).optional().describe("One request."),
    status: z.array(z.enum(FEEDBACK_STATUSES)).max(5).optional().describe("Only these statuses."),
    kind: z.enum(FEEDBACK_KINDS).optional().describe("Only this kind."),
    q: z.string().max(200).optional().describe("Case-insensitive text in title or body."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(requestSchema.extend({ history: z.array(historyEntrySchema).optional().describe("With id: every status move, oldest first.") })).describe("Requests, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page.") }),
  fields: true,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    if (input.id) { where.push("id = ?"); params.push(input.id); }
    if (input.status?.length) { where.push(`status IN (${input.status.map(() => "?").join(", ")})`); params.push(...input.status); }
    if (input.kind) { where.push("kind = ?"); params.push(input.kind); }
    if (input.q?.trim()) { where.push("(instr(lower(title), lower(?)) > 0 OR instr(lower(body), lower(?)) > 0)"); params.push(input.q.trim(), input.q.trim()); }
    const after = decodeKeyset(input.cursor, 1);
    if (after) { where.push("seq < ?"); params.push(after[0]); }
    const rows = await ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`).bind(...params, input.limit + 1).all<Request & { seq: number }>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.seq]);
    const items = page.map(({ seq: _seq, ...r }) => r);
    // One request asked for by id: how it got to its status too.
    if (input.id && items.length === 1) return { items: [{ ...items[0]!, history: await historyOf(ctx, items[0]!.id) }], ...cursor };
    return { items, ...cursor };
  },
  summarize: (r) => `${r.items.length} request(s).`,
});

export const featureRequestSetStatusTool = defineTool({
  name: "feature_request_set_status",
  title: "Move a feature request",
  toolset: "feedback",
  description:
    "Operators: move a filed request along open → accepted → in_progress → shipped, or to declined from any live status, with a note the filer reads. Every move is kept in the request's history and notifies the filer. Operator keys only; shipped and declined are final.",
  input: z.object({
    id: z.string().min(1).max(100).describe("The request."),
    status: z.enum(["accepted", "in_progress", "shipped", "declined"]).describe("The new status."),
    note: z.string().max(2000).optional().describe("What the filer should know (becomes the resolution note); omit to keep the current one."),
    expected_status: z.enum(FEEDBACK_STATUSES).optional().describe("Refuse with conflict unless the request still has this status."),
  }),
  output: z.object({
    request: requestSchema.describe("The request after the move."),
    changed: z.boolean().describe("False when it already had that status."),
    history: z.array(historyEntrySchema).describe("Every move, oldest first."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (!ctx.operator) {
      throw new ToolError("operator_required", "Feature requests are moved by this server's operators, and this key is not an operator key.", {
        hint: "File or add to a request with feature_request_create and follow it with feature_request_query; an operator key (npm run keys -- create … --operator) moves it.",
      });
    }
    const before = await findRequest(ctx, input.id);
    if (input.expected_status && before.status !== input.expected_status) {
      throw new ToolError("conflict", `The request is ${before.status}, not ${input.expected_status}.`, { hint: "Re-read it with feature_request_query and decide again." });
    }
    if (before.status === input.status) return { request: before, changed: false, history: await historyOf(ctx, before.id) };
    const problem = transitionProblem(before.status, input.status);
    if (problem) {
      throw new ToolError("invalid_transition", `Cannot move the request from ${before.status} to ${input.status}: ${problem}.`, {
        hint: isLive(before.status)
          ? "Move it forward (open → accepted → in_progress → shipped) or to declined."
          : "A request that comes back after it shipped or was declined is filed again with feature_request_create.",
      });
    }
    const now = iso(ctx.clock.now());
    const note = input.note ?? "";
    // One batch: the compare-and-swap, then the history, activity and the filer's notice only if it landed.
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1
        .prepare(`UPDATE feature_requests SET status = ?, resolution_note = COALESCE(?, resolution_note), updated_at = ? WHERE tenant_id = ? AND id = ? AND status = ? RETURNING id`)
        .bind(input.status, input.note ?? null, now, ctx.tenantId, before.id, before.status),
      ctx.d1
        .prepare(`INSERT INTO feature_request_events (id, tenant_id, request_id, from_status, to_status, note, actor_id, at) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() > 0`)
        .bind(uuidv7(), ctx.tenantId, before.id, before.status, input.status, note, ctx.actorId, now),
      activityStatement(ctx, {
        verb: `feature_request.${input.status}`, objectType: "feature_request", objectId: before.id,
        summary: `${before.title}: ${before.status} → ${input.status}`, ifPreviousChanged: true,
      }),
      ctx.d1
        .prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                  SELECT ?, ?, ?, 'feedback', 'feature_request', ?, ?, ?, ? WHERE changes() > 0 AND ? <> ?`)
        .bind(uuidv7(), ctx.tenantId, before.actor_id, before.id, `Your request "${before.title}" is now ${input.status}`.slice(0, 300), ctx.actorId, now, before.actor_id, ctx.actorId),
    ]);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The request's status changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    return { request: await findRequest(ctx, before.id), changed: true, history: await historyOf(ctx, before.id) };
  },
  summarize: (r) => `${r.request.title} is ${r.request.status}.`,
});
