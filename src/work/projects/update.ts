import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement, actorRefField, clearable, dateField, resolveActor } from "../shared";
import { checkDates, checkParent, findProject, type Project, PROJECT_STATUSES, projectSchema, updateProjectStatement } from "./model";

const nullableDate = (d: string) => clearable(dateField(d)).optional();

export const projectUpdateTool = defineTool({
  name: "project_update",
  title: "Update a project",
  toolset: "projects",
  description: "Patch a project: only the fields named change; null clears dates, owner and parent.",
  input: z.object({
    project_id: z.string().min(1).max(100).describe("Project id or key."),
    patch: z
      .object({
        title: z.string().trim().min(1).max(200).optional().describe("New title."),
        summary: z.string().max(2000).optional().describe("New summary."),
        description: z.string().max(20000).optional().describe("New description."),
        status: z.enum(PROJECT_STATUSES).optional().describe("New status."),
        start_on: nullableDate("Start date (YYYY-MM-DD)."),
        target_on: nullableDate("Target date (YYYY-MM-DD)."),
        owner_actor_id: clearable(actorRefField("Owner.")).optional(),
        parent_project_id: clearable(z.string().max(100).describe("Parent project id or key.")).optional(),
      })
      .strict()
      .refine((p) => Object.keys(p).length > 0, "patch names no field")
      .describe("The fields to change."),
  }),
  output: z.object({ project: projectSchema.describe("The project after the change."), changed: z.array(z.string()).describe("Fields whose value changed.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const before = await findProject(ctx, input.project_id);
    const p = input.patch;
    const next: Record<string, string | null> = {};
    for (const f of ["title", "summary", "description", "status", "start_on", "target_on"] as const) if (p[f] !== undefined) next[f] = p[f];
    checkDates(p.start_on !== undefined ? p.start_on : before.start_on, p.target_on !== undefined ? p.target_on : before.target_on);
    if (p.owner_actor_id !== undefined) next.owner_actor_id = p.owner_actor_id === null ? null : await resolveActor(ctx, p.owner_actor_id);
    if (p.parent_project_id !== undefined) next.parent_project_id = p.parent_project_id === null ? null : await checkParent(ctx, p.parent_project_id, before.id);
    const changed = Object.keys(next).filter((k) => next[k] !== before[k as keyof Project]);
    if (changed.length === 0) return { project: before, changed };
    const now = iso(ctx.clock.now());
    const [updated] = await ctx.d1.batch<{ id: string }>([
      updateProjectStatement(ctx, before.id, next, changed, now),
      activityStatement(ctx, {
        verb: "project.updated",
        objectType: "project",
        objectId: before.id,
        projectId: before.id,
        summary: `updated ${changed.join(", ")} of ${before.key}`,
        metadata: { changed },
        ifPreviousChanged: true,
      }),
    ]);
    if (updated!.results.length === 0) {
      throw new ToolError("cycle", "The new parent would create a cycle (the hierarchy changed while this call ran).", { hint: "Re-read the projects and pick another parent." });
    }
    return { project: await findProject(ctx, before.id), changed };
  },
  summarize: (r) => (r.changed.length ? `Updated ${r.changed.join(", ")} of ${r.project.key}.` : `No change to ${r.project.key}.`),
});
