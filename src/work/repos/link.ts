import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { findProject } from "../projects/model";
import { changeLinkRoleStatement, findRepository, insertLinkStatement, linkRoleStatement, REPO_ROLES, repositorySchema } from "./model";

export const repoLinkTool = defineTool({
  name: "repo_link",
  title: "Link a repository to a project",
  toolset: "repos",
  description:
    "Link a project to a registered repository, with a role (primary, dependency or docs). Linking again with the same role, or with none, changes nothing. Changing the role is deliberate: pass the role you replace as expected_role; a different role without it is refused with conflict.",
  input: z.object({
    project_id: z.string().min(1).max(100).describe("Project id or key."),
    repository_id: z.string().min(1).max(200).optional().describe("Repository id (or owner/name)."),
    repo_slug: z.string().min(1).max(200).optional().describe("owner/name, instead of repository_id."),
    role: z.enum(REPO_ROLES).optional().describe("primary, dependency or docs; a new link defaults to primary, an existing one keeps its role unless given."),
    expected_role: z.enum(REPO_ROLES).optional().describe("To change an existing link's role: the role it has now (else conflict). Needs role."),
  }),
  output: z.object({ project_id: z.string().describe("Project."), repository: repositorySchema.describe("Repository."), role: z.enum(REPO_ROLES).describe("The link's role.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const ref = input.repository_id ?? input.repo_slug;
    if (!ref) throw invalidInput("repository_id or repo_slug is required.", "Name the repository to link.");
    if (input.expected_role && !input.role) throw invalidInput("expected_role needs role, the role to change it to.", "Pass role, or drop expected_role.");
    const [project, repo] = await Promise.all([findProject(ctx, input.project_id), findRepository(ctx, ref)]);
    const role = input.role ?? "primary";
    const key = [ctx.tenantId, project.id, repo.id] as const;
    // Compare-and-swap: a new link, or a role change from exactly the role the caller named.
    const write = input.expected_role ? changeLinkRoleStatement(ctx, key, input.expected_role, role) : insertLinkStatement(ctx, key, role, iso(ctx.clock.now()));
    const [, , link] = await ctx.d1.batch<{ role: (typeof REPO_ROLES)[number] }>([
      write,
      activityStatement(ctx, {
        verb: "repo.linked",
        objectType: "project",
        objectId: project.id,
        projectId: project.id,
        summary: `${repo.slug} linked as ${role}`,
        metadata: input.expected_role ? { repository_id: repo.id, previous_role: input.expected_role } : { repository_id: repo.id },
        ifPreviousChanged: true,
      }),
      linkRoleStatement(ctx, key),
    ]);
    const stored = link!.results[0]?.role;
    if (!stored) {
      throw new ToolError("conflict", `${repo.slug} is not linked to ${project.key}, so it has no role ${input.expected_role} to replace.`, { hint: "Drop expected_role to link it." });
    }
    if (input.role && stored !== input.role) {
      throw new ToolError("conflict", `${repo.slug} is linked to ${project.key} as ${stored}${input.expected_role ? `, not ${input.expected_role}` : ""}; the link was left as it is.`, {
        hint: `To make it ${input.role}, retry with expected_role: ${stored}.`,
      });
    }
    return { project_id: project.id, repository: repo, role: stored };
  },
  summarize: (r) => `${r.repository.slug} is a ${r.role} repository of the project.`,
});
