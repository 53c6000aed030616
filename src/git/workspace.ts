/**
 * The seed's workspace pick (workspaceRoot, rootIndex, allWorkspaceRoots) over GitHub: a "root"
 * here is a repository. workspace_root names one (as repo does); root_index picks the tenant's
 * Nth registered repository in repo_query's order (by slug, then id), 0-based;
 * all_workspace_roots covers every registered repository. The pick only fills in repo / repos,
 * so each tool keeps one way of reading its repositories.
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import { dbOf } from "../db/client";
import { repositories } from "../db/schema";
import type { Ctx } from "../core/context";
import { invalidInput, ToolError } from "../core/errors";
import { resolveRepo } from "./repo";
import type { RepoName } from "./tokens";

/** How many repositories a fan-out covers (`repos`, all_workspace_roots). */
export const MAX_PICKED = 20;
const MAX_ROOT_INDEX = 9999;

export const workspaceRootField = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("The seed's workspaceRoot: the repository, as repo takes it (owner/name, or a registered id or slug). Give it or repo, not both.");
export const rootIndexField = z
  .number()
  .int()
  .min(0)
  .max(MAX_ROOT_INDEX)
  .optional()
  .describe("The seed's rootIndex: the tenant's Nth registered repository (0-based) in repo_query's order (by slug).");
export const allWorkspaceRootsField = z.boolean().default(false).describe(`The seed's allWorkspaceRoots: every repository registered with repo_register (at most ${MAX_PICKED}).`);

export const pickFields = { workspace_root: workspaceRootField, root_index: rootIndexField };
export const fanOutPickFields = { ...pickFields, all_workspace_roots: allWorkspaceRootsField };

export interface Picked {
  repo?: string;
  repos?: string[];
  workspace_root?: string;
  root_index?: number;
  all_workspace_roots?: boolean;
}

async function registered(ctx: Ctx): Promise<string[]> {
  const rows = await dbOf(ctx)
    .select({ id: repositories.id })
    .from(repositories)
    .where(eq(repositories.tenantId, ctx.tenantId))
    .orderBy(repositories.slug, repositories.id)
    .limit(MAX_ROOT_INDEX + 2)
    .all();
  return rows.map((r) => r.id);
}

/**
 * Fills `repo` (or `repos`, for all_workspace_roots) from the pick, in the seed's order:
 * workspace_root, then root_index, then all_workspace_roots. Two ways of naming the same thing
 * are refused rather than one silently winning.
 */
export async function applyPick<T extends Picked>(ctx: Ctx, input: T): Promise<T> {
  const { workspace_root: root, root_index: index, all_workspace_roots: all } = input;
  const picks = [root !== undefined && "workspace_root", index !== undefined && "root_index", all && "all_workspace_roots"].filter(Boolean);
  const clash = picks.length > 1 ? picks : picks.length === 1 && input.repo !== undefined && !all ? ["repo", ...picks] : all && input.repos?.length ? ["repos", ...picks] : [];
  if (clash.length > 0) {
    throw invalidInput(
      `${clash.join(" and ")} were given together; they name the repositories in different ways.`,
      "Give one: repo (or workspace_root, the seed's name for it), root_index, repos, or all_workspace_roots.",
    );
  }
  if (root !== undefined) return { ...input, repo: root };
  if (index === undefined && !all) return input;
  const ids = await registered(ctx);
  if (index !== undefined) {
    const id = ids[index];
    if (id === undefined) {
      throw new ToolError("root_index_out_of_range", `rootIndex ${index} is out of range: the tenant has ${ids.length} registered repositor${ids.length === 1 ? "y" : "ies"}.`, {
        hint: ids.length === 0 ? "Register one with repo_register, or pass repo (owner/name)." : `Pass 0–${ids.length - 1} (repo_query lists them in this order), or pass repo (owner/name).`,
      });
    }
    return { ...input, repo: id };
  }
  if (ids.length === 0) throw invalidInput("all_workspace_roots: the tenant has no registered repositories.", "Register them with repo_register, or pass repos (owner/name list).");
  if (ids.length > MAX_PICKED) {
    throw invalidInput(
      `all_workspace_roots: the tenant has ${ids.length} registered repositories; one call covers at most ${MAX_PICKED}.`,
      "Pass repos (a list of at most 20), or root_index for one.",
    );
  }
  return { ...input, repos: ids };
}

/** The one repository a tool acts on, after the pick. */
export function requireRepo(input: Picked, why: string): string {
  if (input.repo !== undefined) return input.repo;
  throw invalidInput(`Name the repository: ${why}.`, "Pass repo (owner/name, or a registered id or slug), workspace_root (the same), or root_index.");
}

/** The repository a mutating tool acts on: the pick applied, then resolved. */
export async function pickedRepo(ctx: Ctx, input: Picked, why: string): Promise<RepoName> {
  return resolveRepo(ctx, requireRepo(await applyPick(ctx, input), why));
}
