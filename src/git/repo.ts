/**
 * The `repo` every git tool takes: `owner/name`, or a repository registered in the work ledger
 * (its id or slug). A registered repository must live on the GitHub this server talks to.
 */
import { and, eq, or, sql } from "drizzle-orm";
import { z } from "zod";
import { dbOf } from "../db/client";
import { repositories } from "../db/schema";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { apiBase } from "./credentials";
import { parseOwnerName, type RepoName } from "./tokens";

export const repoField = z
  .string()
  .min(1)
  .max(200)
  .describe("The repository: owner/name (e.g. octocat/Hello-World) on the configured GitHub, or a repository id or slug registered with repo_register.");

/** The web host of the configured API: api.github.com serves github.com; GHE serves its own host. */
export function githubHost(base: string): string {
  const host = new URL(base).hostname.toLowerCase();
  return host === "api.github.com" ? "github.com" : host;
}

export async function resolveRepo(ctx: Ctx, ref: string): Promise<RepoName> {
  const text = ref.trim();
  const row = await dbOf(ctx)
    .select({ host: repositories.host, owner: repositories.owner, name: repositories.name })
    .from(repositories)
    // The slug matches case-insensitively, as it always has.
    .where(and(eq(repositories.tenantId, ctx.tenantId), or(eq(repositories.id, text), sql`${repositories.slug} = ${text} COLLATE NOCASE`)))
    .limit(1)
    .get();
  if (row) {
    const host = githubHost(apiBase(ctx.env));
    if (row.host.toLowerCase() !== host) {
      throw new ToolError("repo_not_on_github", `Repository ${row.owner}/${row.name} is registered on ${row.host}, but this server talks to ${host}.`, {
        hint: "Pass a repository on the configured GitHub, or ask an operator to point GITHUB_API_URL at that host.",
      });
    }
    const parsed = parseOwnerName(`${row.owner}/${row.name}`);
    if (parsed) return parsed;
  }
  const parsed = parseOwnerName(text);
  if (!parsed) {
    throw new ToolError("invalid_repo", `repo '${text.slice(0, 100)}' is neither owner/name nor a registered repository.`, {
      hint: "Pass owner/name (e.g. octocat/Hello-World), or a repository id or slug from repo_query.",
    });
  }
  return parsed;
}
