/**
 * What every read-only git tool shares (seed 002 over the GitHub API): the `repo` / `repos`
 * fields, the tenant's client, GitHub errors mapped onto the envelope, the seed's `format`
 * (markdown, or the minified payload with empty fields omitted), and bounded fan-out.
 */
import { z } from "zod";
import type { Ctx } from "../core/context";
import { defineTool, READ_ONLY, type ToolDef } from "../core/define-tool";
import { ToolError } from "../core/errors";
import { GitHubError, type GitHubClient } from "./client";
import { githubFor, githubToolError } from "./credentials";
import { compact, formatField, gitErrorText } from "./output";
import { resolveRepo, repoField } from "./repo";
import { applyPick, fanOutPickFields, MAX_PICKED, type Picked, pickFields } from "./workspace";
import type { RepoName } from "./tokens";

export interface Git {
  ctx: Ctx;
  gh: Pick<GitHubClient, "request">;
}

/**
 * GitHub requests one call may make. A Worker invocation has a subrequest cap (1,000 on the paid
 * plan), and fan-out (repos × paths × pages) could otherwise multiply past it or drain the
 * tenant's hourly rate limit in one call.
 */
export const REQUEST_BUDGET = 300;

function budgeted(client: GitHubClient, budget: number): Git["gh"] {
  let used = 0;
  return {
    request: (op, params, body) => {
      if (++used > budget) {
        return Promise.reject(
          new ToolError("request_budget_exceeded", `This call would need more than ${budget} GitHub requests.`, {
            hint: "Narrow it: fewer repos or paths, a shorter since, a smaller max_commits, or stats off.",
          }),
        );
      }
      return client.request(op, params, body);
    },
  };
}

/** The seed fans out across workspace roots; here across repositories. */
export const MAX_REPOS = MAX_PICKED;
export const reposField = z.array(repoField).min(1).max(MAX_REPOS).optional().describe(`Several repositories to cover in one call (each like repo), at most ${MAX_REPOS}; they are read 4 at a time.`);

export const fullName = (r: RepoName) => `${r.owner}/${r.name}`;
export const repoParams = (r: RepoName) => ({ owner: r.owner, repo: r.name });

type Format = { format: "markdown" | "json" };

interface GitReadDef<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  /** Without `format`: every git tool gets the seed's format field. */
  input: I;
  output: O;
  /** Takes all_workspace_roots too (the tools that read several repositories, through repos). */
  fanOut?: true;
  /** GitHub requests one call may make, when the tool's own bound needs more than REQUEST_BUDGET. */
  requestBudget?: number;
  run(git: Git, input: z.output<I> & Format): Promise<z.input<O>>;
  markdown(result: z.output<O>, input: z.output<I> & Format): string;
}

/**
 * One read-only git tool. The payload is compacted (the seed's omission rule) before it reaches
 * structuredContent, so the JSON text and the structured result are the same object.
 */
export function gitReadTool<I extends z.ZodObject, O extends z.ZodObject>(def: GitReadDef<I, O>): ToolDef {
  const input = def.input.extend({ ...(def.fanOut ? fanOutPickFields : pickFields), format: formatField });
  return defineTool({
    name: def.name,
    title: def.title,
    description: def.description,
    toolset: "git",
    input,
    output: def.output,
    annotations: { ...READ_ONLY, openWorld: true },
    run: async (ctx, parsed) => {
      try {
        const args = await applyPick(ctx, parsed as z.output<I> & Format & Picked);
        return compact(await def.run({ ctx, gh: budgeted(githubFor(ctx.env, ctx.tenantId), def.requestBudget ?? REQUEST_BUDGET) }, args)) as z.input<O>;
      } catch (err) {
        throw githubToolError(err);
      }
    },
    text: (result, parsed) => {
      const args = parsed as z.output<I> & Format;
      return args.format === "json" ? JSON.stringify(result) : def.markdown(result as z.output<O>, args);
    },
    errorText: gitErrorText,
  }) as unknown as ToolDef;
}

/** The repositories a call covers: `repos` when given, else `repo`; duplicates dropped, order kept. */
export async function reposInScope(ctx: Ctx, input: { repo?: string; repos?: string[] }, why: string): Promise<RepoName[]> {
  const refs = input.repos?.length ? input.repos : input.repo ? [input.repo] : [];
  if (refs.length === 0) throw new ToolError("invalid_input", `Name the repository: ${why}.`, { hint: "Pass repo (owner/name) or repos (a list of them)." });
  const out = new Map<string, RepoName>();
  for (const ref of refs) {
    const r = await resolveRepo(ctx, ref);
    out.set(fullName(r).toLowerCase(), r);
  }
  return [...out.values()];
}

export const isNotFound = (err: unknown) => err instanceof GitHubError && (err.code === "github_not_found" || err.code === "github_unprocessable");

export const repoNotFound = (r: RepoName) =>
  new ToolError("repo_not_found", `Repository ${fullName(r)} was not found on GitHub, or the tenant's credentials cannot see it.`, {
    hint: "Check owner/name; a fine-grained token or App installation must include this repository.",
  });

/**
 * A 404 from a call that names a ref could mean the repository or the ref: one more request
 * (only on this error path) tells which, so the caller gets the right code and hint.
 */
export async function explainMissing(git: Git, r: RepoName, err: unknown, refError: () => ToolError): Promise<never> {
  if (!isNotFound(err)) throw err;
  try {
    await git.gh.request("GET /repos/{owner}/{repo}", repoParams(r));
  } catch (inner) {
    if (isNotFound(inner)) throw repoNotFound(r);
    throw inner;
  }
  throw refError();
}

/** The repository's default branch (one request, ETag-cached). */
export async function defaultBranch(git: Git, r: RepoName): Promise<string> {
  try {
    const res = await git.gh.request<{ default_branch: string }>("GET /repos/{owner}/{repo}", repoParams(r));
    return res.data.default_branch;
  } catch (err) {
    if (isNotFound(err)) throw repoNotFound(r);
    throw err;
  }
}

/** Runs `fn` over `items`, `limit` at a time (the seed's parallelism is 4), keeping order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Errors that fail the whole call even where rows report their own: they would fail every row
 * the same way (no credentials, refused credentials, the rate limit, this call's request budget).
 */
export function rethrowFatal(err: unknown): void {
  if (err instanceof ToolError && (err.code === "github_not_configured" || err.code === "request_budget_exceeded")) throw err;
  if (err instanceof GitHubError && (err.code === "github_rate_limited" || err.code === "github_auth_failed")) throw err;
}

/** The envelope code of an error, for a per-repository row that reports it instead of failing the call. */
export function errorCode(err: unknown): string {
  const mapped = githubToolError(err);
  return mapped instanceof ToolError ? mapped.code : "internal_error";
}

/** "42m ago", "3h ago", "5d ago", as the seed's ageRelative. */
export function ageRelative(iso: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 86_400 * 60) return `${Math.floor(s / 86_400)}d ago`;
  if (s < 86_400 * 730) return `${Math.floor(s / (86_400 * 30))}mo ago`;
  return `${Math.floor(s / (86_400 * 365))}y ago`;
}

/** A `git status -b` header line: `## branch...base [ahead N, behind M]`. */
export const statusHeader = (branch: string, base: string, ahead: number, behind: number) => {
  if (branch === base) return `## ${branch}`;
  const counts = [ahead ? `ahead ${ahead}` : "", behind ? `behind ${behind}` : ""].filter(Boolean).join(", ");
  return `## ${branch}...${base}${counts ? ` [${counts}]` : ""}`;
};

/** Markdown table cells: GitHub text must not break the table. */
export const cell = (text: string | number | undefined) =>
  String(text ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\n/g, " ");
