import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { actorRefField, cursorField, limitField, resolveActor, keysetPage } from "../shared";
import { listProjects, type ProjectFilter, PROJECT_STATUSES, projectSchema, taskCounts, taskCountsSchema } from "./model";

export const projectQueryTool = defineTool({
  name: "project_query",
  title: "Find projects",
  toolset: "projects",
  description: "List or search projects, newest first.",
  input: z.object({
    project_id: z.string().max(100).optional().describe("One project, by id or key."),
    status: z.array(z.enum(PROJECT_STATUSES)).max(6).optional().describe("Only these statuses."),
    q: z.string().max(200).optional().describe("Case-insensitive text in key, title or summary."),
    owner_actor_id: actorRefField("Only projects owned by this actor.").optional(),
    repository_id: z.string().min(1).max(500).optional().describe("Only projects linked to this repository: its id, owner/name or remote URL."),
    detail: z.enum(["summary", "full"]).default("summary").describe("full adds task_counts."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(projectSchema.extend({ task_counts: taskCountsSchema.optional().describe("With detail: 'full'.") })).describe("Projects."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page; absent on the last page."),
  }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const filter: ProjectFilter = {
      ref: input.project_id || undefined,
      statuses: input.status,
      q: input.q?.trim() || undefined,
      ownerActorId: input.owner_actor_id ? await resolveActor(ctx, input.owner_actor_id) : undefined,
      repositoryRef: input.repository_id,
      cursor: input.cursor,
    };
    const rows = await listProjects(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.created_at, last.id]);
    const counts =
      input.detail === "full"
        ? await taskCounts(
            ctx,
            page.map((p) => p.id),
          )
        : null;
    return {
      items: page.map((p) => (counts ? { ...p, task_counts: counts.get(p.id)! } : p)),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} project(s).`,
});
