/** get_context_for_prompt and git_commit_retrieval (seed 004). */
import { z } from "zod";
import { resolveSince } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { activePlanHandoff, handoffMarkdown, handoffSchema, type Handoff } from "../../plans/progress/handoff";
import { commitScope, committedRepos, searchCommits } from "../commits";
import { CHARS_PER_TOKEN } from "../context";
import { promptContext } from "../prompt-context";
import { queryTerms, ftsPhrase } from "../terms";
import { indexedOf, indexesField, optionalRepoField, repoOf } from "./common";

/** Seed 004's validation messages, word for word (docs/code-review-plans.md: Code context). */
const contextInput = z.object({
  query: z
    .string({ error: "Invalid query parameter: must be a non-empty string" })
    .trim()
    .min(1, "Invalid query parameter: must be a non-empty string")
    .max(1000, "Query too long: maximum 1000 characters")
    .describe("What the prompt is about."),
  max_files: z
    .number({ error: "Invalid max_files parameter: must be a number between 1 and 20" })
    .int()
    .min(1, "Invalid max_files parameter: must be a number between 1 and 20")
    .max(20, "Invalid max_files parameter: must be a number between 1 and 20")
    .default(5)
    .describe("Most files to include."),
  token_budget: z
    .number({ error: "Invalid token_budget parameter: must be a number between 500 and 100000" })
    .int()
    .min(500, "Invalid token_budget parameter: must be a number between 500 and 100000")
    .max(100_000, "Invalid token_budget parameter: must be a number between 500 and 100000")
    .default(8000)
    .describe("Token budget for the code."),
  include_related: z.boolean().default(true).describe("Add small files the chosen ones import."),
  min_relevance: z
    .number({ error: "Invalid min_relevance parameter: must be a number between 0 and 1" })
    .min(0, "Invalid min_relevance parameter: must be a number between 0 and 1")
    .max(1, "Invalid min_relevance parameter: must be a number between 0 and 1")
    .default(0.3)
    .describe("Drop chunks below this relevance (0–1, relative to the best)."),
  bypass_cache: z.boolean().default(false).describe("Skip cached answers."),
  include_paths: z.array(z.string().min(1).max(300)).max(20).optional().describe("Only paths matching these globs."),
  exclude_paths: z.array(z.string().min(1).max(300)).max(20).optional().describe("Leave out paths matching these globs."),
  handoff_mode: z
    .enum(["none", "active_plan"], { error: 'Invalid handoff_mode parameter: must be "none" or "active_plan"' })
    .default("none")
    .describe("active_plan: add the saved plan plan_id's goal, step status and next step, and put the files its ready and in-progress steps touch first."),
  plan_id: z
    .string({ error: "Invalid plan_id parameter: must be a non-empty string when provided" })
    .trim()
    .min(1, "Invalid plan_id parameter: must be a non-empty string when provided")
    .max(200)
    .optional()
    .describe("The saved plan for handoff_mode active_plan."),
  repo: optionalRepoField,
});

const fileSchema = z.object({
  repo: z.string().describe("owner/name."),
  path: z.string().describe("File path."),
  language: z.string().describe("Language."),
  relevance: z.number().describe("0–1 (0 for related files)."),
  reason: z.enum(["pinned", "match", "related"]).describe("pinned: a file the active plan's ready or in-progress steps touch; match: found by the query; related: imported by a match."),
  whole: z.boolean().describe("The whole file, or excerpts."),
  line_ranges: z.array(z.tuple([z.number().int(), z.number().int()])).describe("Lines included."),
  tokens: z.number().int().describe("Estimated tokens."),
  content: z.string().describe("The code included."),
});

const REASON_NOTE = { pinned: " · in the active plan", related: " · imported by a match" } as const;

function contextMarkdown(
  query: string,
  r: { files: z.infer<typeof fileSchema>[]; stats: { tokens_used: number; token_budget: number; truncated: boolean }; freshness: { warning: string }; handoff?: Handoff },
): string {
  const parts = [
    `# Context for: ${query}`,
    `${r.files.length} file(s), about ${r.stats.tokens_used} of ${r.stats.token_budget} tokens${r.stats.truncated ? " (budget reached: some matches left out)" : ""}.`,
  ];
  if (r.freshness.warning) parts.push(`> ⚠ ${r.freshness.warning}`);
  if (r.handoff) parts.push(handoffMarkdown(r.handoff));
  for (const f of r.files) {
    parts.push(
      `## ${f.repo}: ${f.path}${f.whole ? "" : ` (lines ${f.line_ranges.map(([a, b]) => `${a}-${b}`).join(", ")})`}${f.reason === "match" ? ` · relevance ${f.relevance.toFixed(2)}` : REASON_NOTE[f.reason]}`,
    );
    parts.push("```" + f.language + "\n" + f.content.replace(/\n$/, "") + "\n```");
  }
  if (r.files.length === 0) parts.push("No indexed code matched; try other words, or a lower min_relevance.");
  return parts.join("\n\n");
}

export const getContextForPromptTool = defineTool({
  name: "get_context_for_prompt",
  title: "Context for a prompt",
  toolset: "code",
  description:
    "Bundle the code most relevant to a prompt within a token budget: best files whole or as excerpts, plus the files they import; warns when the index is behind the branch. handoff_mode active_plan adds a saved plan's state and puts its active files first.",
  input: contextInput,
  output: z.object({
    files: z.array(fileSchema).describe("Files: the active plan's first, then by relevance, related ones last."),
    stats: z
      .object({
        files: z.number().int().describe("Files included."),
        candidates: z.number().int().describe("Matching chunks considered."),
        tokens_used: z.number().int().describe("Estimated tokens of code included."),
        token_budget: z.number().int().describe("The budget."),
        truncated: z.boolean().describe("The budget left matches out."),
        chars_per_token: z.number().describe("The estimate tokens are counted with."),
        mode: z.string().describe("How chunks were ranked."),
      })
      .describe("Packing figures."),
    freshness: z
      .object({
        fresh: z.boolean().nullable().describe("Every index read is at its branch head (null: unknown)."),
        warning: z.string().describe("Which index is behind its branch, or ''."),
      })
      .describe("Index freshness."),
    indexes: indexesField,
    handoff: handoffSchema.optional(),
  }),
  annotations: { ...READ_ONLY, openWorld: true },
  run: async (ctx, input) => {
    if (input.handoff_mode === "active_plan" && input.plan_id === undefined) {
      throw invalidInput("plan_id is required when handoff_mode is active_plan", "Pass the saved plan's plan_id (list_plans shows them), or leave handoff_mode out.");
    }
    const handoff = input.handoff_mode === "active_plan" ? await activePlanHandoff(ctx, input.plan_id!) : undefined;
    const { packed, indexes, freshness } = await promptContext(ctx, {
      query: input.query,
      repo: input.repo,
      maxFiles: input.max_files,
      tokenBudget: input.token_budget,
      includeRelated: input.include_related,
      minRelevance: input.min_relevance,
      includePaths: input.include_paths,
      excludePaths: input.exclude_paths,
      pinned: handoff?.active_files,
      bypassCache: input.bypass_cache,
    });
    return {
      files: packed.files,
      stats: {
        files: packed.files.length,
        candidates: packed.candidates,
        tokens_used: packed.tokens_used,
        token_budget: input.token_budget,
        truncated: packed.truncated,
        chars_per_token: CHARS_PER_TOKEN,
        mode: packed.mode,
      },
      freshness,
      indexes: indexes.map(indexedOf),
      ...(handoff ? { handoff } : {}),
    };
  },
  text: (r, input) => contextMarkdown(input.query, r),
});

export const gitCommitRetrievalTool = defineTool({
  name: "git_commit_retrieval",
  title: "Search commit history",
  toolset: "code",
  description: "Search indexed repositories' commit history (messages and changed files), best match first.",
  input: z.object({
    query: z.string().trim().min(1).max(1000).describe("What the change was about."),
    max_commits: z.number().int().min(1).max(100).default(10).describe("Commit limit."),
    since: z.string().max(64).optional().describe('Only commits since: an ISO date or a window (7d, 1mo, "1 week ago").'),
    author: z.string().max(200).optional().describe("Only this author (name, case-insensitive)."),
    repo: optionalRepoField,
  }),
  output: z.object({
    commits: z
      .array(
        z.object({
          sha: z.string().describe("Commit hash."),
          message: z.string().describe("Commit message."),
          author: z.string().describe("Author name."),
          date: z.string().describe("ISO timestamp."),
          files_changed: z.array(z.string()).describe("Modified files (known for pushed and the newest back-filled commits)."),
          relevance_score: z.number().describe("Match score (0–1)."),
          repo: z.string().describe("owner/name."),
        }),
      )
      .describe("Best match first."),
    total_found: z.number().int().describe("Matching commits (up to 1000)."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const name = input.repo ? await repoOf(ctx, input.repo) : undefined;
    const repos = name ? [`${name.owner}/${name.name}`.toLowerCase()] : await committedRepos(ctx.d1, ctx.tenantId);
    let since = "";
    if (input.since) {
      const relative = /^(\d+)\s*(minute|hour|day|week|month|year)s?\s+ago$/i.exec(input.since.trim());
      const units: Record<string, string> = { minute: "m", hour: "h", day: "d", week: "w", month: "mo", year: "y" };
      const text = relative ? (relative[2]!.toLowerCase() === "week" ? `${Number(relative[1]) * 7}d` : `${relative[1]}${units[relative[2]!.toLowerCase()]}`) : input.since;
      const resolved = resolveSince(text, ctx.clock.now());
      if (!resolved) throw invalidInput(`since '${input.since.slice(0, 64)}' is not a date or a window`, 'Use an ISO date (2026-01-31), a window (7d, 2mo) or "2 weeks ago".');
      since = resolved;
    }
    const terms = queryTerms(input.query).slice(0, 24);
    if (terms.length === 0 || repos.length === 0) return { commits: [], total_found: 0 };
    const scopes = await Promise.all(repos.map((r) => commitScope(ctx.tenantId, r)));
    const match = `scope : (${scopes.map((s) => `(${s.split(" ").join(" AND ")})`).join(" OR ")}) AND {message files_changed} : (${terms.map(ftsPhrase).join(" OR ")})`;
    const rows = await searchCommits(ctx.d1, ctx.tenantId, match, since, input.author ?? "");
    const best = rows[0]?.rank ?? -1;
    return {
      commits: rows.slice(0, input.max_commits).map((r) => ({
        sha: r.sha,
        message: r.message,
        author: r.author,
        date: r.date,
        files_changed: JSON.parse(r.files_changed) as string[],
        relevance_score: best < 0 ? Math.round((r.rank / best) * 1000) / 1000 : 0,
        repo: r.repo,
      })),
      total_found: rows.length,
    };
  },
  summarize: (r) => `${r.commits.length} of ${r.total_found} matching commit(s).`,
});

export const contextTools = [getContextForPromptTool, gitCommitRetrievalTool];
