import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { actorRefField, resolveActor } from "../shared";
import { findProject } from "../projects/model";
import { findTask } from "../tasks/model";
import { createHandoff, dueAtField, HANDOFF_KINDS, handoffSchema, parseDueAt, refuseSecondReview } from "./model";

export const handoffCreateTool = defineTool({
  name: "handoff_create",
  title: "Create a handoff",
  toolset: "handoffs",
  description: "Send a work request to actors; a live one with the same fingerprint is returned instead; a second open review of a task is refused.",
  input: z.object({
    to_actor_ids: z.array(actorRefField("A recipient.")).min(1).max(20).describe("Recipients."),
    title: z.string().trim().min(1).max(300).describe("What is asked, in a line."),
    kind: z.enum(HANDOFF_KINDS).default("handoff").describe("What kind of request."),
    body: z.string().max(20_000).optional().describe("Details."),
    options: z
      .array(z.union([z.string().min(1).max(200), z.object({ label: z.string().min(1).max(200).describe("Option."), summary: z.string().max(1000).optional().describe("What it means.") })]))
      .max(20)
      .optional()
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
    return createHandoff(
      ctx,
      {
        kind: input.kind,
        title: input.title,
        body: input.body ?? "",
        recipients,
        options,
        allowFreeText: input.allow_free_text,
        relatedTaskId: task?.id ?? null,
        relatedProjectId: project?.id ?? task?.project_id ?? null,
        dueAt,
        fingerprint: input.fingerprint ?? null,
      },
      secondReview,
    );
  },
  summarize: (r) => `${r.deduplicated ? "Reused" : "Created"} ${r.handoff.kind} ${r.handoff.id} to ${r.handoff.to_actor_ids.length} recipient(s).`,
});
