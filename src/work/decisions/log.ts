import { z } from "zod";
import { appendChained } from "../../changes/chain";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { embedAfterResponse, queueEmbedding } from "../../search/semantic";
import { decisionEmbedText } from "../../search/sources";
import { activityStatement } from "../shared";
import { findProject } from "../projects/model";
import { defaultRepository, linkedPaths, linkedPathsField, linkStatements, PATHS_DESCRIPTION, resolveLinks } from "../memory/model";
import { DECISION_STATUSES, decisionSchema, findDecision, insertDecisionStatement, optionSchema } from "./model";

export const decisionLogTool = defineTool({
  name: "decision_log",
  title: "Log a decision",
  toolset: "decisions",
  description: "Append a decision; to change one, log a new one that supersedes it.",
  input: z.object({
    title: z.string().trim().min(1).max(300).describe("What was decided about."),
    choice: z.string().trim().min(1).max(4000).describe("What was chosen."),
    context: z.string().max(20_000).optional().describe("The situation that called for it."),
    rationale: z.string().max(20_000).optional().describe("Why this choice."),
    options: z.array(optionSchema).max(20).optional().describe("The options weighed, with pros and cons."),
    project_id: z.string().min(1).max(100).optional().describe("Project id or key; omit for a tenant-wide decision."),
    status: z.enum(DECISION_STATUSES).default("accepted").describe("Status."),
    supersedes_decision_id: z.string().min(1).max(100).optional().describe("The decision this one replaces."),
    paths: linkedPathsField(PATHS_DESCRIPTION).optional(),
  }),
  output: z.object({ decision: decisionSchema.describe("The logged decision."), paths: z.array(z.string()).describe("Its linked paths, as owner/name:pattern.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  keyedBatch: true,
  run: async (ctx, input) => {
    const project = input.project_id ? await findProject(ctx, input.project_id) : null;
    const superseded = input.supersedes_decision_id ? await findDecision(ctx, input.supersedes_decision_id) : null;
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    const projectId = project?.id ?? superseded?.project_id ?? null;
    const links = input.paths?.length ? await resolveLinks(ctx, input.paths, () => defaultRepository(ctx, projectId)) : [];
    // Embedded on write for recall by meaning: queued in the same batch, made after the response.
    const embedRef = { tenantId: ctx.tenantId, type: "decision" as const, id };
    const text = decisionEmbedText({ title: input.title, choice: input.choice, context: input.context ?? "", rationale: input.rationale ?? "" });
    const row = {
      id,
      tenant_id: ctx.tenantId,
      project_id: projectId,
      title: input.title,
      choice: input.choice,
      context: input.context ?? "",
      rationale: input.rationale ?? "",
      options: JSON.stringify(input.options ?? []),
      status: input.status,
      supersedes_decision_id: superseded?.id ?? null,
      created_by: ctx.actorId,
      created_at: now,
      status_changed_at: now,
    };
    // The decision and its link in the tenant's tamper-evident chain are written together, with
    // the call's idempotency key taken first (before the activity row its retry window reads).
    await appendChained(
      ctx.d1,
      ctx.tenantId,
      now,
      [
        ...(ctx.keyed?.open() ?? []),
        insertDecisionStatement(ctx, row),
        activityStatement(ctx, {
          verb: superseded ? "decision.superseded" : "decision.logged",
          objectType: "decision",
          objectId: id,
          projectId,
          summary: `${input.title}: ${input.choice}`.slice(0, 300),
          metadata: superseded ? { supersedes: superseded.id } : {},
        }),
        await queueEmbedding(ctx.d1, embedRef, text, ctx.clock.now()),
        ...linkStatements(ctx, "decision", id, links, now, { replace: false }),
      ],
      [{ kind: "decision", row }],
      (drain) => ctx.waitUntil(drain),
    );
    embedAfterResponse(ctx, [embedRef]);
    return { decision: await findDecision(ctx, id), paths: links.length > 0 ? await linkedPaths(ctx, "decision", id) : [] };
  },
  summarize: (r) => `Logged decision ${r.decision.id}: ${r.decision.title}.`,
});
