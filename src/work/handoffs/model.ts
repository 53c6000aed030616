/** Handoffs and the inbox (seed 001): typed work requests between actors. */
import { z } from "zod";
import { boundedJson } from "../../core/bounds";
import { uuidv7 } from "../../db/ids";
import { iso, parseIsoInstant } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { excerpt, invalidInput, notFound, ToolError } from "../../core/errors";
import { activityStatement, actorRefField, type Condition, cursorField, afterTimeAndId, jsonArray, limitField, resolveActor, keysetPage } from "../shared";
import { findProject } from "../projects/model";
import { findTask } from "../tasks/model";

export const HANDOFF_KINDS = ["handoff", "question", "review", "collab", "approval"] as const;
export type HandoffKind = (typeof HANDOFF_KINDS)[number];
export const HANDOFF_STATUSES = ["open", "claimed", "responded", "resolved", "cancelled"] as const;
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];
const LIVE = ["open", "claimed"];
/** How a review is answered. Only `approved` unlocks done; the other two send the task back to in_progress. */
export const VERDICTS = ["approved", "changes_requested", "rejected"] as const;
export type Verdict = (typeof VERDICTS)[number];

const optionSchema = z.object({ label: z.string().describe("Option."), summary: z.string().describe("What it means.") });

export const handoffSchema = z.object({
  id: z.string().describe("Handoff id."),
  kind: z.enum(HANDOFF_KINDS).describe("handoff, question, review, collab or approval."),
  title: z.string().describe("Title."),
  body: z.string().describe("The request."),
  from_actor_id: z.string().describe("Who asked."),
  to_actor_ids: z.array(z.string()).describe("Recipients."),
  status: z.enum(HANDOFF_STATUSES).describe("open, claimed, responded, resolved or cancelled."),
  claimed_by: z.string().nullable().describe("The recipient working on it, or null."),
  options: z.array(optionSchema).describe("Choices offered."),
  allow_free_text: z.boolean().describe("Whether a response may be free text rather than an option."),
  response: z.record(z.string(), z.unknown()).nullable().describe("The response, or null."),
  responded_by: z.string().nullable().describe("Who responded, or null."),
  responded_at: z.string().nullable().describe("When, or null."),
  verdict: z.enum(VERDICTS).nullable().describe("A review's verdict (approved, changes_requested or rejected), or null: not answered yet, or not a review."),
  resolution: z.string().nullable().describe("processed or cancelled once resolved, else null."),
  resolution_note: z.string().describe("Note given when resolving."),
  related_task_id: z.string().nullable().describe("Related task, or null."),
  related_project_id: z.string().nullable().describe("Related project, or null."),
  due_at: z.string().nullable().describe("Due time, or null."),
  fingerprint: z.string().nullable().describe("De-duplication fingerprint, or null."),
  created_at: z.string().describe("When it was created."),
  updated_at: z.string().describe("Last change."),
  acked: z.boolean().describe("Whether you (as a recipient) acknowledged it; false if you are not one."),
});
export type Handoff = z.infer<typeof handoffSchema>;

const HANDOFF_COLUMNS = `h.id, h.kind, h.title, h.body, h.from_actor_id, h.status, h.claimed_by, h.options, h.allow_free_text, h.response,
  h.responded_by, h.responded_at, h.verdict, h.resolution, h.resolution_note, h.related_task_id, h.related_project_id, h.due_at, h.fingerprint,
  h.created_at, h.updated_at,
  (SELECT json_group_array(r.actor_id) FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id) AS to_actor_ids,
  (SELECT r.acked_at IS NOT NULL FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?) AS acked`;

type HandoffRow = Omit<Handoff, "to_actor_ids" | "options" | "response" | "allow_free_text" | "acked"> & {
  to_actor_ids: string; options: string; response: string | null; allow_free_text: number; acked: number | null;
};

function toHandoff(r: HandoffRow): Handoff {
  let response: Record<string, unknown> | null;
  try { response = r.response ? (JSON.parse(r.response) as Record<string, unknown>) : null; } catch { response = {}; }
  return {
    ...r,
    to_actor_ids: jsonArray<string>(r.to_actor_ids).sort(),
    options: jsonArray<{ label: string; summary?: string }>(r.options).map((o) => ({ label: o.label, summary: o.summary ?? "" })),
    allow_free_text: r.allow_free_text === 1,
    response,
    acked: r.acked === 1,
  };
}

const selectHandoff = (ctx: Ctx, id: string) =>
  ctx.d1.prepare(`SELECT ${HANDOFF_COLUMNS} FROM handoffs h WHERE h.tenant_id = ? AND h.id = ?`).bind(ctx.actorId, ctx.tenantId, id);

/** The handoff, or null when there is none in the caller's tenant. */
export async function maybeHandoff(ctx: Ctx, id: string): Promise<Handoff | null> {
  const row = await selectHandoff(ctx, id).first<HandoffRow>();
  return row ? toHandoff(row) : null;
}

export async function findHandoff(ctx: Ctx, id: string): Promise<Handoff> {
  const h = await maybeHandoff(ctx, id);
  if (!h) throw notFound("handoff", id, "handoff_query or inbox lists your handoffs.");
  return h;
}

export type HandoffOption = { label: string; summary: string };

/** A handoff to write: recipients already resolved to actor ids, due time already parsed. */
export interface HandoffSpec {
  kind: HandoffKind;
  title: string;
  body: string;
  recipients: readonly string[];
  options: readonly HandoffOption[];
  allowFreeText: boolean;
  relatedTaskId?: string | null;
  relatedProjectId?: string | null;
  dueAt?: Date | null;
  fingerprint?: string | null;
}

/**
 * The statements that write a handoff (its row, handoff.created, one recipient row and one
 * notification per recipient) for a D1 batch. The row is written only when `when` holds and no
 * live handoff holds its fingerprint; the rest only if the row was, so a caller that puts its own
 * row before these (and `when` on it) gets both or neither.
 */
export function handoffStatements(ctx: Ctx, spec: HandoffSpec, when: Condition = { sql: "1", params: [] }): { id: string; statements: D1PreparedStatement[] } {
  const id = uuidv7();
  const now = iso(ctx.clock.now());
  const projectId = spec.relatedProjectId ?? null;
  const recipients = [...new Set(spec.recipients)];
  const statements = [
    ctx.d1
      .prepare(
        `INSERT INTO handoffs (id, tenant_id, kind, title, body, from_actor_id, status, related_task_id, related_project_id, fingerprint, options, allow_free_text, due_at, created_at, updated_at)
         SELECT ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ? WHERE ${when.sql} ON CONFLICT DO NOTHING RETURNING id`,
      )
      .bind(id, ctx.tenantId, spec.kind, spec.title, spec.body, ctx.actorId, spec.relatedTaskId ?? null, projectId, spec.fingerprint ?? null,
        JSON.stringify(spec.options), spec.allowFreeText ? 1 : 0, spec.dueAt ? iso(spec.dueAt) : null, now, now, ...when.params),
    activityStatement(ctx, { verb: "handoff.created", objectType: "work_request", objectId: id, projectId, summary: `${spec.kind}: ${spec.title}`, ifPreviousChanged: true }),
    // Recipients and notifications exist only if the handoff row was written.
    ...recipients.flatMap((actor) => [
      ctx.d1.prepare(`INSERT INTO handoff_recipients (tenant_id, handoff_id, actor_id) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM handoffs WHERE id = ?)`)
        .bind(ctx.tenantId, id, actor, id),
      ctx.d1.prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                      SELECT ?, ?, ?, ?, 'work_request', ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM handoffs WHERE id = ?)`)
        .bind(uuidv7(), ctx.tenantId, actor, spec.kind, id, spec.title, ctx.actorId, now, id),
    ]),
  ];
  return { id, statements };
}

/**
 * No live review handoff on the task (addressed to `reviewer`, when given), as a condition for a
 * handoff insert, so two racing requests cannot both open one.
 */
export const noLiveReview = (ctx: Ctx, taskId: string, reviewer?: string): Condition => ({
  sql: `NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.tenant_id = ? AND h.related_task_id = ? AND h.kind = 'review' AND h.status IN ('open', 'claimed')
          ${reviewer ? "AND EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?)" : ""})`,
  params: [ctx.tenantId, taskId, ...(reviewer ? [reviewer] : [])],
});

/** The task's live review handoff (to `reviewer`, when given), newest first, or null. */
export async function liveReview(ctx: Ctx, taskId: string, reviewer?: string): Promise<{ id: string; to: string[] } | null> {
  const row = await ctx.d1
    .prepare(`SELECT h.id, (SELECT json_group_array(r.actor_id) FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id) AS recipients
              FROM handoffs h WHERE h.tenant_id = ? AND h.related_task_id = ? AND h.kind = 'review' AND h.status IN ('open', 'claimed')
                ${reviewer ? "AND EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?)" : ""}
              ORDER BY h.created_at DESC, h.id DESC LIMIT 1`)
    .bind(ctx.tenantId, taskId, ...(reviewer ? [reviewer] : []))
    .first<{ id: string; recipients: string }>();
  return row ? { id: row.id, to: jsonArray<string>(row.recipients).sort() } : null;
}

/** One review at a time per task: a second request would become "the latest" and strand the first. */
async function refuseSecondReview(ctx: Ctx, task: { id: string; ref: string }): Promise<void> {
  const open = await liveReview(ctx, task.id);
  if (!open) return;
  throw new ToolError("review_already_open", `${task.ref} already has an open review handoff, ${open.id} (to ${open.to.join(", ")}).`, {
    hint: `Wait for its verdict (handoff_query { direction: "any", related_task_id: "${task.ref}" } shows it), or close it with handoff_resolve { handoff_id: "${open.id}", resolution: "cancelled" } and ask again.`,
  });
}

/** Writes a handoff; a live one holding the same fingerprint is returned instead (deduplicated). */
export async function createHandoff(ctx: Ctx, spec: HandoffSpec, onMiss?: () => Promise<void>): Promise<{ handoff: Handoff; deduplicated: boolean }> {
  const review = spec.kind === "review" && spec.relatedTaskId ? noLiveReview(ctx, spec.relatedTaskId) : undefined;
  const { id, statements } = handoffStatements(ctx, spec, review);
  const [inserted] = await ctx.d1.batch<{ id: string }>(statements);
  if (inserted!.results.length > 0) return { handoff: await findHandoff(ctx, id), deduplicated: false };
  // Lost to a review opened meanwhile: say so rather than report a duplicate.
  if (onMiss) await onMiss();
  const live = await ctx.d1
    .prepare(`SELECT ${HANDOFF_COLUMNS} FROM handoffs h WHERE h.tenant_id = ? AND h.fingerprint = ? AND h.status IN ('open', 'claimed')`)
    .bind(ctx.actorId, ctx.tenantId, spec.fingerprint ?? "")
    .first<HandoffRow>();
  if (!live) throw new ToolError("conflict", "The handoff could not be written and no live duplicate was found.", { hint: "Retry.", retryable: true });
  return { handoff: toHandoff(live), deduplicated: true };
}

/** due_at as the handoff tools take it: a date or an instant, kept in UTC (parseDueAt). */
export const dueAtField = z.string().max(64);

export function parseDueAt(text: string | undefined): Date | null {
  if (!text) return null;
  const due = parseIsoInstant(text);
  if (!due) throw invalidInput(`due_at '${excerpt(text, 64)}' is not an ISO-8601 time.`, "Use e.g. 2026-12-01 or 2026-12-01T17:00:00Z.");
  return due;
}

export const handoffCreateTool = defineTool({
  name: "handoff_create",
  title: "Create a handoff",
  toolset: "handoffs",
  description:
    "Send a work request to one or more actors; a live one with the same fingerprint is returned instead. A review on a task with an open review is refused (review_already_open).",
  input: z.object({
    to_actor_ids: z.array(actorRefField("A recipient.")).min(1).max(20).describe("Recipients."),
    title: z.string().trim().min(1).max(300).describe("What is asked, in a line."),
    kind: z.enum(HANDOFF_KINDS).default("handoff").describe("What kind of request."),
    body: z.string().max(20_000).optional().describe("Details."),
    options: z.array(z.union([z.string().min(1).max(200), z.object({ label: z.string().min(1).max(200).describe("Option."), summary: z.string().max(1000).optional().describe("What it means.") })])).max(20).optional()
      .describe("Choices: labels or {label, summary}."),
    allow_free_text: z.boolean().default(true).describe("Allow a free-text answer (false: one of the options)."),
    related_task_id: z.string().min(1).max(100).optional().describe("Related task (id or KEY-number)."),
    related_project_id: z.string().min(1).max(100).optional().describe("Related project (id or key)."),
    due_at: dueAtField.optional().describe("When an answer is needed (ISO-8601)."),
    fingerprint: z.string().min(1).max(200).optional().describe("De-duplication key (one live handoff per fingerprint)."),
  }),
  output: z.object({ handoff: handoffSchema.describe("The handoff."), deduplicated: z.boolean().describe("True when a live handoff with this fingerprint was returned instead.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const recipients = await Promise.all(input.to_actor_ids.map((r) => resolveActor(ctx, r)));
    const task = input.related_task_id ? await findTask(ctx, input.related_task_id) : null;
    const project = input.related_project_id ? await findProject(ctx, input.related_project_id) : null;
    const dueAt = parseDueAt(input.due_at);
    const options = (input.options ?? []).map((o) => (typeof o === "string" ? { label: o, summary: "" } : { label: o.label, summary: o.summary ?? "" }));
    if (!input.allow_free_text && options.length === 0) throw invalidInput("allow_free_text: false needs options to choose from.", "Pass options, or allow free-text responses.");
    const secondReview = input.kind === "review" && task ? () => refuseSecondReview(ctx, task) : undefined;
    await secondReview?.();
    return createHandoff(ctx, {
      kind: input.kind, title: input.title, body: input.body ?? "", recipients, options, allowFreeText: input.allow_free_text,
      relatedTaskId: task?.id ?? null, relatedProjectId: project?.id ?? task?.project_id ?? null, dueAt, fingerprint: input.fingerprint ?? null,
    }, secondReview);
  },
  summarize: (r) => `${r.deduplicated ? "Reused" : "Created"} ${r.handoff.kind} ${r.handoff.id} to ${r.handoff.to_actor_ids.length} recipient(s).`,
});

/** How a handoff is answered (see answerStatements). */
export interface HandoffAnswer {
  response: Record<string, unknown>;
  verdict: Verdict | null;
  /** Close it as processed with the answer, when nothing is left to do once it is given (a review, an approval). */
  resolve: boolean;
  /** The statuses it may be answered from: the update is a compare-and-swap on them. */
  from: readonly HandoffStatus[];
  notifyAsker: boolean;
  /** A further condition of the update: another write of the batch that must have landed first. */
  when?: Condition;
}

/**
 * The statements that record the caller's answer to `h` for a D1 batch: the update first (it
 * returns the handoff's id when it landed), handoff.responded, the asker's notification. `landed`
 * holds once this call's answer is the handoff's (same responder, same instant, same verdict), for
 * the caller's own statements that must act only then.
 */
export function answerStatements(ctx: Ctx, h: Handoff, a: HandoffAnswer, now: string): { statements: D1PreparedStatement[]; landed: Condition } {
  const when = a.when ?? { sql: "1", params: [] };
  const landed = {
    sql: `EXISTS (SELECT 1 FROM handoffs WHERE tenant_id = ? AND id = ? AND responded_by = ? AND responded_at = ? AND verdict IS ?)`,
    params: [ctx.tenantId, h.id, ctx.actorId, now, a.verdict],
  };
  const summary = a.verdict ? `${a.verdict}: ${h.title}` : `answered: ${h.title}`;
  const statements = [
    ctx.d1
      .prepare(`UPDATE handoffs SET status = ?, response = ?, responded_by = ?, responded_at = ?, verdict = ?, claimed_by = COALESCE(claimed_by, ?), updated_at = ?,
                  resolution = CASE WHEN ? THEN 'processed' ELSE resolution END, resolved_at = CASE WHEN ? THEN ? ELSE resolved_at END
                WHERE tenant_id = ? AND id = ? AND status IN (SELECT value FROM json_each(?)) AND ${when.sql} RETURNING id`)
      .bind(a.resolve ? "resolved" : "responded", JSON.stringify(a.response), ctx.actorId, now, a.verdict, ctx.actorId, now, a.resolve ? 1 : 0, a.resolve ? 1 : 0, now,
        ctx.tenantId, h.id, JSON.stringify(a.from), ...when.params),
    activityStatement(ctx, {
      verb: "handoff.responded", objectType: "work_request", objectId: h.id, projectId: h.related_project_id,
      summary, metadata: a.verdict ? { verdict: a.verdict, resolved: a.resolve } : {}, ifPreviousChanged: true,
    }),
  ];
  if (a.notifyAsker) {
    statements.push(
      ctx.d1.prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                      SELECT ?, ?, ?, 'response', 'work_request', ?, ?, ?, ? WHERE ${landed.sql}`)
        .bind(uuidv7(), ctx.tenantId, h.from_actor_id, h.id, summary, ctx.actorId, now, ...landed.params),
    );
  }
  return { statements, landed };
}

const handoffIdField = z.string().min(1).max(100).describe("The handoff.");

export const handoffClaimTool = defineTool({
  name: "handoff_claim",
  title: "Claim a handoff",
  toolset: "handoffs",
  description: "Claim an open handoff addressed to you; exactly one recipient wins.",
  input: z.object({ handoff_id: handoffIdField }),
  output: z.object({ handoff: handoffSchema.describe("The handoff, now claimed by you."), already: z.boolean().describe("True when you already held it.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const handoff = await findHandoff(ctx, input.handoff_id);
    const outcome = await ctx.env.CLAIMS.get(ctx.env.CLAIMS.idFromName(`${ctx.tenantId}:handoffs`)).claimHandoff({
      tenantId: ctx.tenantId, actorId: ctx.actorId, sessionId: ctx.sessionId, runId: ctx.runId ?? null, handoffId: handoff.id, nowMs: ctx.clock.now().getTime(),
    });
    if (!outcome.claimed) {
      if (outcome.reason === "not_recipient") throw new ToolError("not_recipient", "This handoff is not addressed to you.", { hint: "Only its recipients can claim it; inbox lists the ones addressed to you." });
      if (outcome.reason === "taken") throw new ToolError("handoff_taken", `Another recipient (${outcome.holder}) already claimed this handoff.`, { hint: "Leave it to them, or ask them with a comment on the work_request." });
      throw new ToolError("handoff_closed", `This handoff is ${handoff.status}; only open handoffs can be claimed.`, { hint: "handoff_query shows its response and resolution." });
    }
    return { handoff: await findHandoff(ctx, handoff.id), already: outcome.already };
  },
  summarize: (r) => `You hold handoff ${r.handoff.id}.`,
});

const responseObject = boundedJson(z
  .object({
    chosen_option: z.string().max(200).optional().describe("One of the handoff's option labels."),
    text: z.string().max(20_000).optional().describe("Free-text answer."),
    result_ref: z.string().max(500).optional().describe("Where the result is (URL, commit, task ref)."),
    verdict: z.enum(VERDICTS).optional().describe("A review's verdict; it resolves the review."),
  })
  .catchall(z.unknown())
  .refine((r) => Object.keys(r).length > 0, "response is empty"), { maxBytes: 65_536, maxDepth: 8 })
  .describe("The answer; extra keys are kept.");

export const handoffRespondTool = defineTool({
  name: "handoff_respond",
  title: "Respond to a handoff",
  toolset: "handoffs",
  description: "Answer a handoff addressed to you: an offered option, free text where allowed, and a verdict for a review (guide: handoffs).",
  input: z.object({
    handoff_id: handoffIdField,
    response: responseObject,
  }),
  output: z.object({ handoff: handoffSchema.describe("The handoff with its response.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const h = await findHandoff(ctx, input.handoff_id);
    if (!h.to_actor_ids.includes(ctx.actorId)) throw new ToolError("not_recipient", "This handoff is not addressed to you.", { hint: "Only its recipients can respond." });
    if (!LIVE.includes(h.status)) throw new ToolError("handoff_closed", `This handoff is ${h.status}; it can no longer be answered.`, { hint: "Create a new handoff if more is needed." });
    if (h.status === "claimed" && h.claimed_by !== ctx.actorId) throw new ToolError("handoff_taken", `Another recipient (${h.claimed_by}) holds this handoff.`, { hint: "Only the recipient who claimed it can respond." });
    const r = input.response;
    if (r.chosen_option !== undefined && !h.options.some((o) => o.label === r.chosen_option)) {
      throw invalidInput(`chosen_option '${r.chosen_option}' is not one of the options.`, `Choose one of: ${h.options.map((o) => o.label).join(", ") || "(none offered: answer with text)"}.`);
    }
    if (!h.allow_free_text && r.chosen_option === undefined) throw invalidInput("This handoff needs one of its options as the answer.", `Set chosen_option to one of: ${h.options.map((o) => o.label).join(", ")}.`);
    const review = h.kind === "review";
    if (review && r.verdict === undefined) {
      throw new ToolError("verdict_required", "A review handoff is answered with a verdict.", {
        hint: "Set response.verdict to approved, changes_requested or rejected; text can say why. Only approved unlocks done on the task.",
      });
    }
    const verdict = review ? r.verdict! : null;
    const task = verdict && h.related_task_id ? await findTask(ctx, h.related_task_id) : null;
    const now = iso(ctx.clock.now());
    // Whoever does the task hears the verdict; the asker hears of the answer as before (once, if both are one actor).
    const verdictTo = task ? (task.assignee_actor_id ?? h.from_actor_id) : null;
    const notifyVerdict = verdictTo !== null && verdictTo !== ctx.actorId;
    const notifyAsker = !(notifyVerdict && verdictTo === h.from_actor_id);
    const sendBack = task !== null && (verdict === "changes_requested" || verdict === "rejected");
    const { statements, landed } = answerStatements(ctx, h, { response: r, verdict, resolve: review, from: [h.status], notifyAsker }, now);
    if (task && notifyVerdict) {
      const why = r.text ? `: ${r.text}` : "";
      statements.push(
        ctx.d1.prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                        SELECT ?, ?, ?, 'review_verdict', 'task', ?, ?, ?, ? WHERE ${landed.sql}`)
          .bind(uuidv7(), ctx.tenantId, verdictTo, task.id, `${verdict} on ${task.ref}${why}`.slice(0, 300), ctx.actorId, now, ...landed.params),
      );
    }
    if (task && sendBack) {
      // Back to work, only from in_review: a task someone already moved on is left where it is.
      statements.push(
        ctx.d1.prepare(`UPDATE tasks SET status = 'in_progress', updated_at = ? WHERE tenant_id = ? AND id = ? AND status = 'in_review' AND ${landed.sql} RETURNING id`)
          .bind(now, ctx.tenantId, task.id, ...landed.params),
        activityStatement(ctx, {
          verb: "task.in_progress", objectType: "task", objectId: task.id, projectId: task.project_id, summary: `${task.ref} in_review → in_progress (review: ${verdict})`,
          metadata: { changed: ["status"], from: "in_review", to: "in_progress", verdict, handoff_id: h.id }, ifPreviousChanged: true,
        }),
      );
    }
    const [updated] = await ctx.d1.batch<{ id: string }>(statements);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The handoff changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    return { handoff: await findHandoff(ctx, h.id) };
  },
  summarize: (r) => (r.handoff.verdict ? `Review ${r.handoff.id}: ${r.handoff.verdict} (resolved).` : `Responded to ${r.handoff.id}.`),
});

/** Where a task's review stands, as the done gate and task_get see it. */
export const reviewStandingSchema = z.object({
  handoff_id: z.string().describe("The latest review handoff addressed to the task's reviewer."),
  status: z.enum(HANDOFF_STATUSES).describe("Its status."),
  verdict: z.enum(VERDICTS).nullable().describe("Its verdict, or null while unanswered."),
  requested_by: z.string().describe("Who asked for the review (its from_actor_id)."),
  responded_by: z.string().nullable().describe("Who gave the verdict, or null."),
  responded_at: z.string().nullable().describe("When, or null."),
  approved: z.boolean().describe("True when this review unlocks done: approved by the task's reviewer, who is neither the one who asked nor the task's assignee."),
  reason: z.string().describe("Why it does not unlock done (\"\" when approved)."),
});
export type ReviewStanding = z.infer<typeof reviewStandingSchema>;

/**
 * The latest review handoff on a task addressed to its reviewer, and whether it unlocks done. Only
 * the latest counts, so a fresh round of review must itself be approved, and an approval counts
 * only from the reviewer, never from whoever asked for it or the assignee doing the work.
 */
export async function reviewStanding(ctx: Ctx, task: { id: string; assignee_actor_id: string | null }, reviewer: string): Promise<ReviewStanding | null> {
  const h = await ctx.d1
    .prepare(
      `SELECT h.id, h.status, h.verdict, h.from_actor_id, h.responded_by, h.responded_at FROM handoffs h
       WHERE h.tenant_id = ? AND h.related_task_id = ? AND h.kind = 'review'
         AND EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?)
       ORDER BY h.created_at DESC, h.id DESC LIMIT 1`,
    )
    .bind(ctx.tenantId, task.id, reviewer)
    .first<{ id: string; status: Handoff["status"]; verdict: Verdict | null; from_actor_id: string; responded_by: string | null; responded_at: string | null }>();
  if (!h) return null;
  const reason = h.verdict === null
    ? "the reviewer has not given a verdict yet"
    : h.verdict !== "approved"
      ? `the verdict is ${h.verdict}`
      : h.responded_by !== reviewer
        ? "it was approved by someone other than the task's reviewer"
        : h.responded_by === h.from_actor_id || h.responded_by === task.assignee_actor_id
          ? "it was approved by the one who asked for it or the task's assignee, and nobody approves their own work"
          : "";
  return {
    handoff_id: h.id, status: h.status, verdict: h.verdict, requested_by: h.from_actor_id, responded_by: h.responded_by, responded_at: h.responded_at,
    approved: reason === "", reason,
  };
}

export const handoffResolveTool = defineTool({
  name: "handoff_resolve",
  title: "Resolve a handoff",
  toolset: "handoffs",
  description: "Close a handoff as processed or cancelled; its creator or any recipient may.",
  input: z.object({
    handoff_id: handoffIdField,
    resolution: z.enum(["processed", "cancelled"]).default("processed").describe("How it ended."),
    note: z.string().max(2000).optional().describe("Why, or what came of it."),
  }),
  output: z.object({ handoff: handoffSchema.describe("The resolved handoff.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const h = await findHandoff(ctx, input.handoff_id);
    if (h.from_actor_id !== ctx.actorId && !h.to_actor_ids.includes(ctx.actorId)) {
      throw new ToolError("not_participant", "Only the handoff's creator or its recipients can resolve it.", { hint: "Comment on the work_request instead." });
    }
    if (h.status === "resolved" || h.status === "cancelled") throw new ToolError("handoff_closed", `This handoff is already ${h.status}.`, { hint: "Nothing to do." });
    const status = input.resolution === "cancelled" ? "cancelled" : "resolved";
    const now = iso(ctx.clock.now());
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1.prepare(`UPDATE handoffs SET status = ?, resolution = ?, resolution_note = ?, resolved_at = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND status = ? RETURNING id`)
        .bind(status, input.resolution, input.note ?? "", now, now, ctx.tenantId, h.id, h.status),
      activityStatement(ctx, { verb: `handoff.${status}`, objectType: "work_request", objectId: h.id, projectId: h.related_project_id, summary: `${input.resolution}: ${h.title}`, ifPreviousChanged: true }),
    ]);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The handoff changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    return { handoff: await findHandoff(ctx, h.id) };
  },
  summarize: (r) => `Handoff ${r.handoff.id} ${r.handoff.status}.`,
});

export const handoffQueryTool = defineTool({
  name: "handoff_query",
  title: "Find handoffs",
  toolset: "handoffs",
  description: "List handoffs, newest first: to_me, from_me (yours, with their answers) or any.",
  input: z.object({
    direction: z.enum(["to_me", "from_me", "any"]).default("to_me").describe("Whose handoffs."),
    status: z.array(z.enum(HANDOFF_STATUSES)).max(5).optional().describe("Only these statuses."),
    type: z.array(z.enum(HANDOFF_KINDS)).max(5).optional().describe("Only these kinds."),
    related_task_id: z.string().min(1).max(100).optional().describe("Only handoffs about this task."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({ items: z.array(handoffSchema).describe("Handoffs."), next_cursor: z.string().optional().describe("Pass as cursor for the next page.") }),
  fields: true,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["h.tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    const toMe = "EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?)";
    if (input.direction === "to_me") { where.push(toMe); params.push(ctx.actorId); }
    else if (input.direction === "from_me") { where.push("h.from_actor_id = ?"); params.push(ctx.actorId); }
    if (input.status?.length) { where.push(`h.status IN (${input.status.map(() => "?").join(", ")})`); params.push(...input.status); }
    if (input.type?.length) { where.push(`h.kind IN (${input.type.map(() => "?").join(", ")})`); params.push(...input.type); }
    if (input.related_task_id) { where.push("h.related_task_id = ?"); params.push((await findTask(ctx, input.related_task_id)).id); }
    const after = afterTimeAndId(input.cursor, "h.created_at", "h.id");
    if (after) { where.push(after.sql); params.push(...after.params); }
    const rows = await ctx.d1
      .prepare(`SELECT ${HANDOFF_COLUMNS} FROM handoffs h WHERE ${where.join(" AND ")} ORDER BY h.created_at DESC, h.id DESC LIMIT ?`)
      .bind(ctx.actorId, ...params, input.limit + 1)
      .all<HandoffRow>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.created_at, last.id]);
    return { items: page.map(toHandoff), ...cursor };
  },
  summarize: (r) => `${r.items.length} handoff(s).`,
});

export const inboxTool = defineTool({
  name: "inbox",
  title: "Your inbox",
  toolset: "handoffs",
  description: "Cheap poll of unacknowledged handoffs to you, oldest first; ack them after you act.",
  input: z.object({
    kinds: z.array(z.enum(HANDOFF_KINDS)).max(5).optional().describe("Only these kinds."),
    ack: z.array(z.string().min(1).max(100)).max(200).optional().describe("Ids you have acted on."),
    limit: limitField(50, 200),
  }),
  output: z.object({
    items: z.array(handoffSchema).describe("Unacknowledged handoffs addressed to you, oldest first."),
    acked: z.number().int().describe("How many of ack were acknowledged now (ids not addressed to you do not count)."),
    total: z.number().int().describe("Unacknowledged items in all."),
  }),
  fields: true,
  cost: { items: "ack" },
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const now = iso(ctx.clock.now());
    const kinds = input.kinds?.length ? ` AND h.kind IN (${input.kinds.map(() => "?").join(", ")})` : "";
    // Resolved and cancelled handoffs need no action, so they leave the inbox (as whoami counts it).
    const pending = `FROM handoffs h JOIN handoff_recipients r ON r.tenant_id = h.tenant_id AND r.handoff_id = h.id
      WHERE h.tenant_id = ? AND r.actor_id = ? AND r.acked_at IS NULL AND h.status IN ('open', 'claimed', 'responded')${kinds}`;
    const [acked, items, total] = await ctx.d1.batch<HandoffRow & { n: number }>([
      ctx.d1.prepare(`UPDATE handoff_recipients SET acked_at = ? WHERE tenant_id = ? AND actor_id = ? AND acked_at IS NULL AND handoff_id IN (SELECT value FROM json_each(?)) RETURNING handoff_id`)
        .bind(now, ctx.tenantId, ctx.actorId, JSON.stringify(input.ack ?? [])),
      ctx.d1.prepare(`SELECT ${HANDOFF_COLUMNS} ${pending} ORDER BY h.created_at ASC, h.id ASC LIMIT ?`)
        .bind(ctx.actorId, ctx.tenantId, ctx.actorId, ...(input.kinds ?? []), input.limit),
      ctx.d1.prepare(`SELECT COUNT(*) AS n ${pending}`).bind(ctx.tenantId, ctx.actorId, ...(input.kinds ?? [])),
    ]);
    return { items: (items!.results as HandoffRow[]).map(toHandoff), acked: acked!.results.length, total: total!.results[0]?.n ?? 0 };
  },
  summarize: (r) => `${r.total} item(s) in your inbox${r.acked ? `, ${r.acked} acknowledged` : ""}.`,
});
