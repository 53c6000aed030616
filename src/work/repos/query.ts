import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { findProject } from "../projects/model";
import { listRepositories, repositorySchema } from "./model";

export const repoQueryTool = defineTool({
  name: "repo_query",
  title: "Find repositories",
  toolset: "repos",
  description: "List the tenant's repositories, by slug order; project_id shows a project's linked repositories with their roles.",
  input: z.object({
    repository_id: z.string().min(1).max(200).optional().describe("One repository (id or owner/name)."),
    slug: z.string().min(1).max(200).optional().describe("Exact owner/name (case-insensitive)."),
    project_id: z.string().min(1).max(100).optional().describe("Only repositories linked to this project."),
    host: z.string().min(1).max(200).optional().describe("Only this host."),
    q: z.string().max(200).optional().describe("Text in owner/name."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(repositorySchema.extend({ role: z.string().optional().describe("The link's role, with project_id.") })).describe("Repositories."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const where = ["r.tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    let join = "";
    let role = "";
    if (input.project_id) {
      join = "JOIN project_repositories pr ON pr.tenant_id = r.tenant_id AND pr.repository_id = r.id AND pr.project_id = ?";
      role = ", pr.role";
      params.unshift((await findProject(ctx, input.project_id)).id);
    }
    if (input.repository_id) {
      where.push("(r.id = ? OR r.slug = ? COLLATE NOCASE)");
      params.push(input.repository_id, input.repository_id);
    }
    if (input.slug) {
      where.push("r.slug = ? COLLATE NOCASE");
      params.push(input.slug);
    }
    if (input.host) {
      where.push("r.host = ?");
      params.push(input.host.toLowerCase());
    }
    if (input.q?.trim()) {
      where.push("instr(lower(r.slug), lower(?)) > 0");
      params.push(input.q.trim());
    }
    const after = decodeKeyset(input.cursor, 2);
    if (after) {
      where.push("(r.slug > ? OR (r.slug = ? AND r.id > ?))");
      params.push(after[0], after[0], after[1]);
    }
    const rows = await listRepositories(ctx, join, role, where, params, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.slug, last.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} repository(ies).`,
});
