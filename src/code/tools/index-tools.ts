/** Index control: index_workspace, reindex_workspace, index_status, clear_index, get_workspace_info. */
import { z } from "zod";
import { confirmFirst } from "../../core/confirm";
import { githubFor, githubToolError } from "../../git/credentials";
import { isSafeRef } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { cacheStats } from "../cache";
import { dropGeneration } from "../indexer";
import { limitsField, type LimitsInput } from "../limits";
import { startIndexJob } from "../jobs";
import { INDEX_TASK } from "../index-task";
import { statusItem, statusOf } from "../index-status";
import { deleteIndex, ensureIndex, findIndex, isRunning, listIndexes, repoKey, setLimits, type IndexRow } from "../store";
import { checkHead, codeRepoField, optionalRepoField, refField, repoOf } from "./common";

const GITHUB = { readOnly: false, destructive: false, idempotent: true, openWorld: true } as const;

/** The ref asked for, or the repository's default branch. */
async function refOf(ctx: Ctx, owner: string, name: string, ref: string | undefined): Promise<string> {
  if (ref !== undefined) {
    if (!isSafeRef(ref)) throw invalidInput(`ref '${ref.slice(0, 100)}' is not a valid git ref`, "Pass a branch, tag or commit sha.");
    return ref;
  }
  try {
    return (await githubFor(ctx.env, ctx.tenantId).request<{ default_branch: string }>("GET /repos/{owner}/{repo}", { owner, repo: name })).data.default_branch;
  } catch (err) {
    throw githubToolError(err);
  }
}

/**
 * The index row for the repository and ref, after asking GitHub for the ref's head: a missing
 * repository, ref or credential is answered now, not by a job that fails a minute later.
 */
async function targetIndex(ctx: Ctx, repo: string, ref: string | undefined): Promise<IndexRow> {
  const r = await repoOf(ctx, repo);
  const resolved = await refOf(ctx, r.owner, r.name, ref);
  try {
    await githubFor(ctx.env, ctx.tenantId).request("GET /repos/{owner}/{repo}/commits/{ref}", { owner: r.owner, repo: r.name, ref: resolved });
  } catch (err) {
    throw githubToolError(err);
  }
  return ensureIndex(ctx.d1, ctx.tenantId, r.owner, r.name, resolved, ctx.clock.now());
}

const jobOutput = z.object({
  job_id: z.string().describe("The job (its workflow instance id)."),
  status: z.enum(["started", "resumed", "already_running"]).describe("started; resumed (continues a failed job's work at the same commit); or already_running (job_id is the running one)."),
  index_id: z.string().describe("The index."),
  repo: z.string().describe("owner/name."),
  ref: z.string().describe("The ref indexed."),
  phase: z.string().describe("The index's phase now."),
});

async function start(ctx: Ctx, repo: string, ref: string | undefined, fresh: boolean, limits: LimitsInput) {
  let index = await targetIndex(ctx, repo, ref);
  if (limits) {
    // Kept on the index, so a push's incremental job reads with them too; absent keys keep the default.
    await setLimits(ctx.d1, ctx.tenantId, index.id, JSON.stringify(limits));
    index = { ...index, limits: JSON.stringify(limits) };
  }
  const job = await startIndexJob(ctx.env, index, "full", { fresh }, ctx.clock.now());
  return {
    job_id: job.job_id,
    status: job.started ? (job.resumed ? ("resumed" as const) : ("started" as const)) : ("already_running" as const),
    index_id: index.id,
    repo: `${index.owner}/${index.name}`,
    ref: index.ref,
    phase: job.started ? "queued" : job.phase,
  };
}

export const indexWorkspaceTool = defineTool({
  name: "index_workspace",
  title: "Index a repository",
  toolset: "code",
  description: "Start (or resume) indexing a GitHub repository at a ref; answers at once with a job id. Watch index_status until phase is complete.",
  input: z.object({ repo: codeRepoField, ref: refField, limits: limitsField }),
  output: jobOutput,
  annotations: GITHUB,
  run: (ctx, input) => start(ctx, input.repo, input.ref, false, input.limits),
  task: INDEX_TASK,
  summarize: (r) => `Index job ${r.job_id} ${r.status} for ${r.repo}@${r.ref}.`,
});

export const reindexWorkspaceTool = defineTool({
  name: "reindex_workspace",
  title: "Rebuild a repository's index",
  toolset: "code",
  description: "Rebuild a repository's index from scratch at its ref's current head; the old index answers until the new one is complete.",
  input: z.object({ repo: codeRepoField, ref: refField, limits: limitsField }),
  output: jobOutput,
  annotations: GITHUB,
  confirms: true,
  run: async (ctx, input) => {
    // A whole repository read again from GitHub: worth a yes from the person first.
    await confirmFirst(ctx, { key: "confirm_reindex", message: `Re-index all of ${input.repo}${input.ref ? `@${input.ref}` : ""} from scratch?` });
    return start(ctx, input.repo, input.ref, true, input.limits);
  },
  task: INDEX_TASK,
  summarize: (r) => `Re-index job ${r.job_id} ${r.status} for ${r.repo}@${r.ref}.`,
});

export const indexStatusTool = defineTool({
  name: "index_status",
  title: "Index status",
  toolset: "code",
  description: "Each index's phase (complete says plainly when it is done), progress, errors, indexed commit and freshness against the branch head.",
  input: z.object({ repo: optionalRepoField, check_head: z.boolean().default(true).describe("Compare with the branch head on GitHub (at most once a minute).") }),
  output: z.object({ items: z.array(statusItem).describe("One per indexed repository and ref.") }),
  annotations: { ...READ_ONLY, openWorld: true },
  run: async (ctx, input) => {
    const name = input.repo ? await repoOf(ctx, input.repo) : undefined;
    let rows = await listIndexes(ctx.d1, ctx.tenantId, name ? repoKey(name.owner, name.name) : undefined);
    if (input.check_head) rows = await Promise.all(rows.slice(0, 20).map((r) => (r.generation ? checkHead(ctx, r) : r))).then((checked) => [...checked, ...rows.slice(20)]);
    return { items: rows.map(statusOf) };
  },
  summarize: (r) => r.items.map((i) => `${i.repo}@${i.ref}: ${i.phase}${i.phase === "parsing" ? ` ${i.files_done}/${i.files_total}` : ""}`).join("; ") || "No indexes.",
});

export const clearIndexTool = defineTool({
  name: "clear_index",
  title: "Clear an index",
  toolset: "code",
  description: "Delete a repository's index (every ref, or one) and stop its running job.",
  input: z.object({ repo: codeRepoField, ref: refField.describe("Only this ref (default: every indexed ref).") }),
  output: z.object({ cleared: z.array(z.string()).describe("The refs whose index was deleted.") }),
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const r = await repoOf(ctx, input.repo);
    const rows = input.ref
      ? [await findIndex(ctx.d1, ctx.tenantId, repoKey(r.owner, r.name), input.ref)].filter((x): x is IndexRow => x !== null)
      : await listIndexes(ctx.d1, ctx.tenantId, repoKey(r.owner, r.name));
    for (const row of rows) {
      if (isRunning(row.phase) && row.job_id) {
        try {
          await (await ctx.env.CODE_INDEX.get(row.job_id)).terminate();
        } catch {
          // already ended: deleting the row below supersedes it anyway
        }
      }
      // Without its row, a job still running finds itself superseded at its next step.
      await deleteIndex(ctx.d1, ctx.tenantId, row.id);
      for (const gen of [row.generation, row.pending_generation]) {
        for (let i = 0; i < 1_000 && gen; i++) if (await dropGeneration(ctx.env, ctx.tenantId, gen)) break;
      }
    }
    if (rows.length === 0) throw new ToolError("index_not_found", `${r.owner}/${r.name}${input.ref ? `@${input.ref}` : ""} has no index.`, { hint: "index_status lists the indexes there are." });
    return { cleared: rows.map((x) => x.ref) };
  },
  summarize: (r) => `Cleared ${r.cleared.join(", ")}.`,
});

const workspaceSchema = z.object({
  workspace_path: z.string().describe("owner/name@ref."),
  git_root: z.string().describe("The repository on GitHub."),
  branch: z.string().describe("The ref indexed."),
  commit: z.string().describe("The indexed commit."),
  total_files: z.number().int().describe("Indexed file count."),
  index_status: z
    .object({
      healthy: z.boolean().describe("Complete, with no errors, at the branch head when known."),
      last_indexed: z.string().describe("When it last became current."),
      index_size: z.number().int().describe("Bytes of source indexed."),
      phase: z.string().describe("As index_status reports it."),
    })
    .describe("Index health."),
});

export const getWorkspaceInfoTool = defineTool({
  name: "get_workspace_info",
  title: "Workspace info",
  toolset: "code",
  description: "Index health and cache statistics per indexed repository.",
  input: z.object({ repo: optionalRepoField }),
  output: workspaceSchema.extend({
    cache_stats: z
      .object({
        hit_rate: z.number().describe("Cache hit rate (0–1) in this server process."),
        size: z.number().int().describe("Cached answers."),
        commit_keyed: z.boolean().describe("Answers are keyed by the commit they reflect."),
      })
      .describe("Retrieval cache."),
    repositories: z.array(workspaceSchema).describe("Every indexed repository and ref (the top-level fields describe the first)."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const name = input.repo ? await repoOf(ctx, input.repo) : undefined;
    const rows = await listIndexes(ctx.d1, ctx.tenantId, name ? repoKey(name.owner, name.name) : undefined);
    if (rows.length === 0) {
      throw new ToolError("index_not_found", input.repo ? `${input.repo} has no index.` : "No repository is indexed yet.", { hint: 'Start one with index_workspace {repo: "owner/name"}.' });
    }
    const host = new URL(ctx.env.GITHUB_API_URL || "https://api.github.com").hostname.replace(/^api\./, "");
    const repositories = rows.map((r) => ({
      workspace_path: `${r.owner}/${r.name}@${r.ref}`,
      git_root: `https://${host}/${r.owner}/${r.name}`,
      branch: r.ref,
      commit: r.commit_sha,
      total_files: r.generation ? r.files_total : 0,
      index_status: {
        healthy: r.phase === "complete" && r.generation !== "" && JSON.parse(r.errors).length === 0 && (!r.head_sha || r.head_sha === r.commit_sha),
        last_indexed: r.last_indexed_at,
        index_size: r.bytes_total,
        phase: r.phase,
      },
    }));
    return { ...repositories[0]!, cache_stats: cacheStats(), repositories };
  },
  summarize: (r) => `${r.repositories.length} indexed repository ref(s); ${r.workspace_path}: ${r.index_status.phase}.`,
});

export const indexTools = [indexWorkspaceTool, reindexWorkspaceTool, indexStatusTool, clearIndexTool, getWorkspaceInfoTool];
