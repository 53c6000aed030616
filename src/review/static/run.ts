/** run_static_analysis (seed 004 §11, over what GitHub ran) and review_settings (per-repository review settings). */
import { z } from "zod";
import { githubFor, githubToolError, tenantTokenSource } from "../../git/credentials";
import { isNotFound, repoNotFound, repoParams } from "../../git/read-tool";
import { repoField, resolveRepo } from "../../git/repo";
import { isSafeRepoPath } from "../../git/tokens";
import { defineTool, type AnyToolDef } from "../../core/define-tool";
import { excerpt, invalidInput } from "../../core/errors";
import type { Ctx } from "../../core/context";
import {
  DEFAULT_HOTSPOTS, DEFAULT_INVARIANTS_PATH, effectiveLists, globProblem, hotspotRuleSchema, MAX_CONFIG_PATHS, MAX_HOTSPOT_RULES,
  reviewSettingsFor, updateReviewSettings, type HotspotRule, type ReviewSettings,
} from "../settings/model";
import {
  ANALYZER_NAME, analyzerResultSchema, Deadline, DEFAULT_ANALYZERS, DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_MS, readStaticAnalysis, resolveTarget,
} from "../checks/static-analysis";
import { findingSchema } from "../pipeline/types";
import { DEFAULT_REPO_NOTE, repoOrDefault } from "../target/repo-default";

const MAX_CHANGED_FILES = 1000;

/** Repository-relative paths as the seed's workspace-relative ones: `./` dropped; options, absolute paths and `..` refused. */
function normalizePaths(paths: readonly string[], field: string): string[] {
  return paths.map((raw, i) => {
    const p = raw.trim().replace(/^(?:\.\/)+/, "");
    if (p.startsWith("-")) throw invalidInput(`${field}[${i}] '${excerpt(raw)}': option-like paths are not allowed.`, "Pass paths relative to the repository root, e.g. src/index.ts.");
    if (p.split("/").includes("..")) throw invalidInput(`${field}[${i}] '${excerpt(raw)}': path traversal is not allowed.`, "Pass paths inside the repository, without '..'.");
    if (!isSafeRepoPath(p)) throw invalidInput(`${field}[${i}] '${excerpt(raw)}' is not a repository-relative path.`, "Pass paths relative to the repository root, with forward slashes, e.g. src/index.ts.");
    return p;
  });
}

export const runStaticAnalysisTool = defineTool({
  name: "run_static_analysis",
  title: "Static analysis results GitHub has",
  toolset: "review",
  description:
    "Report static-analysis results for a commit as review findings. This server cannot run tsc or semgrep; it reads what GitHub already ran: " +
    "check runs and their annotations (tsc: TypeScript check runs and annotations; failure→HIGH, warning→MEDIUM, notice→LOW) and " +
    "code-scanning alerts (semgrep: Semgrep's alerts, severity from the rule's security severity). Other tools GitHub reports appear in results " +
    "as github:<tool>; ask for them by that name or with 'all' to get their findings. Analyzers GitHub has nothing from are named in warnings.",
  input: z.object({
    repo: repoField.optional().describe(`The repository: owner/name, or a registered repository's id or slug. ${DEFAULT_REPO_NOTE}`),
    ref: z.string().min(1).max(256).optional().describe("Commit sha, branch, tag, or pull request (pull/<n> or #<n>: its head commit, and code scanning's refs/pull/<n>/merge). Default: the default branch's head."),
    changed_files: z.array(z.string().min(1).max(1000)).max(MAX_CHANGED_FILES).optional()
      .describe(`Only report results in these repository-relative paths (at most ${MAX_CHANGED_FILES}). Default: every path.`),
    options: z.object({
      analyzers: z.array(z.string().min(3).max(107).regex(ANALYZER_NAME)).min(1).max(20).default([...DEFAULT_ANALYZERS])
        .describe("Which analyzers: tsc, semgrep, github:<tool> (a name results lists, e.g. github:CodeQL), or all. Default: ['tsc']."),
      timeout_ms: z.number().int().min(1).max(300_000).default(DEFAULT_TIMEOUT_MS)
        .describe("Time allowed for reading GitHub, in ms (the analyzers share their sources, so this bounds the whole call). Default: 60000."),
      max_findings_per_analyzer: z.number().int().min(1).max(200).default(DEFAULT_MAX_FINDINGS)
        .describe("Most findings per analyzer, the most severe kept (1–200). Default: 20."),
      semgrep_args: z.array(z.string().max(200)).max(50).optional()
        .describe("Accepted for the seed's shape; not applicable here (nothing is run), and a warning says so."),
    }).optional().describe("Analyzer options."),
  }),
  output: z.object({
    success: z.boolean().describe("False when reading stopped short (timeout_ms, or GitHub failing for a while); warnings say which part."),
    analyzers: z.array(z.string()).describe("The analyzers reported on (with 'all': every one GitHub had)."),
    warnings: z.array(z.string()).describe("Analyzers not available and why, bounds reached, what was not applicable."),
    results: z.array(analyzerResultSchema).describe("Per analyzer: what was read and how much matched; other tools GitHub reports are listed with included false."),
    findings: z.array(findingSchema).describe("Findings in the review finding shape, per analyzer in the order asked, most severe first."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: true },
  run: async (ctx, input) => {
    const repo = await repoOrDefault(ctx, input.repo);
    const changedFiles = normalizePaths(input.changed_files ?? [], "changed_files");
    const options = input.options ?? { analyzers: [...DEFAULT_ANALYZERS], timeout_ms: DEFAULT_TIMEOUT_MS, max_findings_per_analyzer: DEFAULT_MAX_FINDINGS };
    const deadline = new Deadline(ctx, options.timeout_ms);
    const target = await resolveTarget(ctx, repo, input.ref, deadline);
    try {
      return await readStaticAnalysis(ctx, target, {
        analyzers: options.analyzers,
        changedFiles,
        timeoutMs: options.timeout_ms,
        maxFindingsPerAnalyzer: options.max_findings_per_analyzer,
        semgrepArgs: options.semgrep_args,
      }, deadline);
    } catch (err) {
      throw githubToolError(err);
    }
  },
  summarize: (r) => `${r.findings.length} finding(s) from ${r.analyzers.join(", ") || "no analyzer"}; ${r.results.filter((x) => x.available).length} analyzer(s) had GitHub results${r.warnings.length ? `; ${r.warnings.length} warning(s)` : ""}.`,
});

// --- review_settings ---------------------------------------------------------------------------

const globList = (max: number) => z.array(z.string().min(1).max(200)).max(max);

const settingsView = z.object({
  hotspots: z.array(hotspotRuleSchema).nullable().describe("The repository's hotspot rules, or null for the default list."),
  config_paths: z.array(z.string()).nullable().describe("The repository's config path globs, or null for the default list."),
  invariants_path: z.string().describe("Where invariants are read from at the head ref."),
  reactive: z.boolean().describe("pull_request webhooks start a reactive review."),
  publish: z.boolean().describe("Finished reactive reviews are published as a pull-request review."),
  updated_at: z.string().nullable().describe("Last change (null: never set, all defaults)."),
  updated_by: z.string().nullable().describe("Who made it."),
});

const viewOf = (s: ReviewSettings): z.infer<typeof settingsView> => ({
  hotspots: s.hotspots, config_paths: s.configPaths, invariants_path: s.invariantsPath, reactive: s.reactive, publish: s.publish,
  updated_at: s.updatedAt, updated_by: s.updatedBy,
});

function checkGlobs(globs: readonly string[], field: string): void {
  globs.forEach((g, i) => {
    const problem = globProblem(g);
    if (problem) throw invalidInput(`${field}[${i}] '${excerpt(g)}' ${problem}.`, "Use repository-relative globs such as 'src/billing/**' or '**/*.yml' (matched case-insensitively, dotfiles included).");
  });
}

function checkHotspots(rules: readonly HotspotRule[]): void {
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    const id = r.id.toLowerCase();
    if (seen.has(id)) throw invalidInput(`hotspots[${i}].id '${excerpt(r.id)}' appears twice.`, "Give each hotspot rule its own id; put all its globs in its paths.");
    seen.add(id);
    checkGlobs(r.paths, `hotspots[${i}].paths`);
  });
}

/**
 * Publishing writes a pull-request review with the tenant's credentials: refuse to turn it on
 * without them, or for a repository they cannot see. Whether they may write reviews shows only
 * when one is published, which the reactive path checks again then.
 */
async function checkCanPublish(ctx: Ctx, owner: string, name: string): Promise<void> {
  await tenantTokenSource(ctx.env, ctx.tenantId)();
  try {
    await githubFor(ctx.env, ctx.tenantId).request("GET /repos/{owner}/{repo}", repoParams({ owner, name }));
  } catch (err) {
    if (isNotFound(err)) throw repoNotFound({ owner, name });
    throw githubToolError(err);
  }
}

type Patch = Parameters<typeof updateReviewSettings>[2];

const sameSettings = (a: ReviewSettings, b: ReviewSettings) =>
  JSON.stringify([a.hotspots, a.configPaths, a.invariantsPath, a.reactive, a.publish]) === JSON.stringify([b.hotspots, b.configPaths, b.invariantsPath, b.reactive, b.publish]);

export const reviewSettingsTool = defineTool({
  name: "review_settings",
  title: "Review settings of a repository",
  toolset: "review",
  description:
    "Read or change one repository's review settings: hotspot rules and config path globs (null goes back to the default list), where invariants " +
    "live, whether pull_request webhooks start a reactive review, and whether finished reviews are published as a PR review (needs GitHub credentials). " +
    "With only repo it reads. The answer includes the effective lists, defaults written out.",
  input: z.object({
    repo: repoField,
    hotspots: z.array(hotspotRuleSchema).max(MAX_HOTSPOT_RULES).nullable().optional()
      .describe(`Hotspot rules [{id, paths}] (at most ${MAX_HOTSPOT_RULES}, ids unique): an id is reported when a changed path matches one of its globs. null: the default list.`),
    config_paths: globList(MAX_CONFIG_PATHS).nullable().optional()
      .describe(`Globs of configuration paths (at most ${MAX_CONFIG_PATHS}); a change to one counts as a config change. null: the default list.`),
    invariants_path: z.string().min(1).max(300).nullable().optional()
      .describe(`Repository path of the invariants YAML. null: ${DEFAULT_INVARIANTS_PATH}.`),
    reactive: z.boolean().optional().describe("true: pull_request webhooks start a reactive review of this repository."),
    publish: z.boolean().optional().describe("true: a finished reactive review is published as a pull-request review (refused without GitHub credentials)."),
  }),
  output: z.object({
    repo: z.string().describe("owner/name."),
    changed: z.boolean().describe("This call changed the stored settings."),
    settings: settingsView.describe("The stored settings."),
    effective: z.object({
      hotspots: z.array(hotspotRuleSchema.extend({ description: z.string().optional().describe("The default rule in words.") })).describe("The hotspot rules in force."),
      config_paths: z.array(z.string()).describe("The config path globs in force."),
      hotspots_default: z.boolean().describe("The hotspot rules are the default list."),
      config_paths_default: z.boolean().describe("The config paths are the default list."),
    }).describe("What a review uses: the stored lists, or the defaults written out."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
  idempotency: "derived",
  run: async (ctx, input) => {
    const repo = await resolveRepo(ctx, input.repo);
    const key = `${repo.owner}/${repo.name}`;
    const patch: Patch = {};
    if (input.hotspots !== undefined) {
      if (input.hotspots) checkHotspots(input.hotspots);
      patch.hotspots = input.hotspots;
    }
    if (input.config_paths !== undefined) {
      if (input.config_paths) checkGlobs(input.config_paths, "config_paths");
      patch.configPaths = input.config_paths;
    }
    if (input.invariants_path !== undefined) {
      const [path] = input.invariants_path === null ? [DEFAULT_INVARIANTS_PATH] : normalizePaths([input.invariants_path], "invariants_path");
      patch.invariantsPath = path!;
    }
    if (input.reactive !== undefined) patch.reactive = input.reactive;
    if (input.publish !== undefined) patch.publish = input.publish;

    const current = await reviewSettingsFor(ctx, key);
    let stored = current;
    if (Object.keys(patch).length > 0 && !sameSettings(current, { ...current, ...patch })) {
      if (patch.publish === true && !current.publish) await checkCanPublish(ctx, repo.owner, repo.name);
      stored = await updateReviewSettings(ctx, key, patch);
    }
    const lists = effectiveLists(stored);
    return {
      repo: key,
      changed: stored !== current,
      settings: viewOf(stored),
      effective: {
        hotspots: stored.hotspots === null ? DEFAULT_HOTSPOTS.map((h) => ({ id: h.id, paths: [...h.paths], description: h.description })) : lists.hotspots,
        config_paths: lists.configPaths,
        hotspots_default: stored.hotspots === null,
        config_paths_default: stored.configPaths === null,
      },
    };
  },
  summarize: (r) => `${r.repo}: ${r.changed ? "settings updated" : "settings unchanged"}; reactive ${r.settings.reactive ? "on" : "off"}, publish ${r.settings.publish ? "on" : "off"}, ${r.effective.hotspots.length} hotspot rule(s)${r.effective.hotspots_default ? " (default)" : ""}.`,
});

export const staticTools: AnyToolDef[] = [runStaticAnalysisTool, reviewSettingsTool];
