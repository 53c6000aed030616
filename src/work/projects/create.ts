import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement, actorRefField, dateField, resolveActor } from "../shared";
import { checkDates, checkParent, findProject, insertProjectStatement, KEY_RULE, keyFromTitle, PROJECT_STATUSES, projectSchema } from "./model";

export const projectCreateTool = defineTool({
  name: "project_create",
  title: "Create a project",
  toolset: "projects",
  description: "Create a project; its key (unique, from the title when omitted) prefixes task refs (KEY-number).",
  input: z.object({
    title: z.string().trim().min(1).max(200).describe("Title."),
    key: z.string().max(16).regex(KEY_RULE, "key must be 2–16 letters or digits, starting with a letter").optional().describe("Short key: 2–16 letters or digits."),
    summary: z.string().max(2000).optional().describe("One-paragraph summary."),
    description: z.string().max(20000).optional().describe("Longer description."),
    status: z.enum(PROJECT_STATUSES).default("active").describe("Initial status."),
    parent_project_id: z.string().max(100).optional().describe("Parent project id or key."),
    owner_actor_id: actorRefField("Owner.").optional(),
    start_on: dateField("Start date (YYYY-MM-DD).").optional(),
    target_on: dateField("Target date (YYYY-MM-DD).").optional(),
  }),
  output: z.object({ project: projectSchema.describe("The new project.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    checkDates(input.start_on, input.target_on);
    const parentId = input.parent_project_id ? await checkParent(ctx, input.parent_project_id, null) : null;
    const ownerId = input.owner_actor_id ? await resolveActor(ctx, input.owner_actor_id) : null;
    const now = iso(ctx.clock.now());
    const id = uuidv7();
    // Keys are stored upper-case, so task refs read the same whoever typed them (API-12).
    const base = (input.key ?? keyFromTitle(input.title)).toUpperCase();
    // An explicit key must be free; a derived one takes the first free suffix.
    const candidates = input.key ? [base] : [base, ...Array.from({ length: 20 }, (_, i) => `${base.slice(0, 14)}${i + 2}`)];
    for (const key of candidates) {
      const [inserted] = await ctx.d1.batch<{ id: string }>([
        insertProjectStatement(ctx, {
          id,
          key,
          title: input.title,
          summary: input.summary ?? "",
          description: input.description ?? "",
          status: input.status,
          parentProjectId: parentId,
          ownerActorId: ownerId,
          startOn: input.start_on ?? null,
          targetOn: input.target_on ?? null,
          now,
        }),
        activityStatement(ctx, { verb: "project.created", objectType: "project", objectId: id, projectId: id, summary: `created project ${key}: ${input.title}`, ifPreviousChanged: true }),
      ]);
      if (inserted!.results.length === 0) continue;
      return { project: await findProject(ctx, id) };
    }
    throw new ToolError("key_taken", `Project key '${base}' is already used by a live project in this tenant.`, {
      hint: "Pass another key, or omit key to have one derived from the title.",
    });
  },
  summarize: (r) => `Created project ${r.project.key} (${r.project.id}).`,
});
