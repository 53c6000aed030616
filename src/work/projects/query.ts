import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { actorRefField, cursorField, afterTimeAndId, limitField, resolveActor, keysetPage } from "../shared";
import { repoRefCondition } from "../repos/model";
import { listProjects, PROJECT_STATUSES, projectSchema, taskCounts, taskCountsSchema } from "./model";

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
    const where = ["tenant_id = ?", "deleted_at IS NULL"];
    const params: unknown[] = [ctx.tenantId];
    if (input.project_id) {
      where.push("(id = ? OR key = ? COLLATE NOCASE)");
      params.push(input.project_id, input.project_id);
    }
    if (input.status?.length) {
      where.push(`status IN (${input.status.map(() => "?").join(", ")})`);
      params.push(...input.status);
    }
    if (input.q?.trim()) {
      where.push("(instr(lower(key), lower(?)) > 0 OR instr(lower(title), lower(?)) > 0 OR instr(lower(summary), lower(?)) > 0)");
      params.push(input.q.trim(), input.q.trim(), input.q.trim());
    }
    if (input.owner_actor_id) {
      where.push("owner_actor_id = ?");
      params.push(await resolveActor(ctx, input.owner_actor_id));
    }
    if (input.repository_id) {
      const repo = repoRefCondition(input.repository_id, "r");
      where.push(`EXISTS (SELECT 1 FROM project_repositories pr JOIN repositories r ON r.tenant_id = pr.tenant_id AND r.id = pr.repository_id
                  WHERE pr.tenant_id = projects.tenant_id AND pr.project_id = projects.id AND ${repo.sql})`);
      params.push(...repo.params);
    }
    const after = afterTimeAndId(input.cursor, "created_at", "id");
    if (after) {
      where.push(after.sql);
      params.push(...after.params);
    }
    const rows = await listProjects(ctx, where, params, input.limit + 1);
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
