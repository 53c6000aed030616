import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { findProject } from "../projects/model";
import { listRepositories, type RepositoryFilter, repositorySchema } from "./model";

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
    const filter: RepositoryFilter = {
      projectId: input.project_id ? (await findProject(ctx, input.project_id)).id : undefined,
      ref: input.repository_id,
      slug: input.slug,
      host: input.host?.toLowerCase(),
      q: input.q?.trim() || undefined,
    };
    filter.after = decodeKeyset(input.cursor, 2);
    const rows = await listRepositories(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.slug, last.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} repository(ies).`,
});
