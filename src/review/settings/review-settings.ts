/** review_settings: one repository's review settings, read or changed. */
import { z } from "zod";
import { githubFor, githubToolError, tenantTokenSource } from "../../git/credentials";
import { isNotFound, repoNotFound, repoParams } from "../../git/read-tool";
import { repoField, resolveRepo } from "../../git/repo";
import { defineTool } from "../../core/define-tool";
import { excerpt, invalidInput } from "../../core/errors";
import type { Ctx } from "../../core/context";
import { normalizePaths } from "../target/repo-paths";
import {
  DEFAULT_HOTSPOTS,
  DEFAULT_INVARIANTS_PATH,
  effectiveLists,
  globProblem,
  hotspotRuleSchema,
  MAX_CONFIG_PATHS,
  MAX_HOTSPOT_RULES,
  reviewSettingsFor,
  updateReviewSettings,
  type HotspotRule,
  type ReviewSettings,
} from "./model";

const globList = (max: number) => z.array(z.string().min(1).max(200)).max(max);

const settingsView = z.object({
  hotspots: z.array(hotspotRuleSchema).nullable().describe("The repository's hotspot rules, or null for the default list."),
  config_paths: z.array(z.string()).nullable().describe("The repository's config path globs, or null for the default list."),
  invariants_path: z.string().describe("Where invariants are read from at the head ref."),
  reactive: z.boolean().describe("pull_request webhooks start a reactive review."),
  publish: z.boolean().describe("Finished reactive reviews are published as a pull-request review."),
  pr_story: z.boolean().describe("Pull requests get one story comment, kept up to date (opened, reopened, each push)."),
  updated_at: z.string().nullable().describe("Last change (null: never set, all defaults)."),
  updated_by: z.string().nullable().describe("Who made it."),
});

const viewOf = (s: ReviewSettings): z.infer<typeof settingsView> => ({
  hotspots: s.hotspots,
  config_paths: s.configPaths,
  invariants_path: s.invariantsPath,
  reactive: s.reactive,
  publish: s.publish,
  pr_story: s.prStory,
  updated_at: s.updatedAt,
  updated_by: s.updatedBy,
});

function checkGlobs(globs: readonly string[], field: string): void {
  globs.forEach((g, i) => {
    const problem = globProblem(g);
    if (problem)
      throw invalidInput(`${field}[${i}] '${excerpt(g)}' ${problem}.`, "Use repository-relative globs such as 'src/billing/**' or '**/*.yml' (matched case-insensitively, dotfiles included).");
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
 * Publishing writes a pull-request review (and pr_story a comment) with the tenant's credentials:
 * refuse to turn either on without them, or for a repository they cannot see. Whether they may
 * write shows only when something is written, which the reactive path and the story check again then.
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
  JSON.stringify([a.hotspots, a.configPaths, a.invariantsPath, a.reactive, a.publish, a.prStory]) === JSON.stringify([b.hotspots, b.configPaths, b.invariantsPath, b.reactive, b.publish, b.prStory]);

export const reviewSettingsTool = defineTool({
  name: "review_settings",
  title: "Review settings of a repository",
  toolset: "review",
  description:
    "Read or change one repository's review settings: hotspot rules and config path globs (null goes back to the default list), where invariants " +
    "live, whether pull_request webhooks start a reactive review, whether finished reviews are published as a PR review, and whether pull requests get the story comment " +
    "(pr_story: the task, decisions, change events, reverted attempts, reservations and ledger check, edited on each push; both need GitHub credentials). " +
    "With only repo it reads. The answer includes the effective lists, defaults written out.",
  input: z.object({
    repo: repoField,
    hotspots: z
      .array(hotspotRuleSchema)
      .max(MAX_HOTSPOT_RULES)
      .nullable()
      .optional()
      .describe(`Hotspot rules [{id, paths}] (at most ${MAX_HOTSPOT_RULES}, ids unique): an id is reported when a changed path matches one of its globs. null: the default list.`),
    config_paths: globList(MAX_CONFIG_PATHS)
      .nullable()
      .optional()
      .describe(`Globs of configuration paths (at most ${MAX_CONFIG_PATHS}); a change to one counts as a config change. null: the default list.`),
    invariants_path: z.string().min(1).max(300).nullable().optional().describe(`Repository path of the invariants YAML. null: ${DEFAULT_INVARIANTS_PATH}.`),
    reactive: z.boolean().optional().describe("true: pull_request webhooks start a reactive review of this repository."),
    publish: z.boolean().optional().describe("true: a finished reactive review is published as a pull-request review (refused without GitHub credentials)."),
    pr_story: z.boolean().optional().describe("true: opening, reopening or pushing to a pull request writes (then edits) one comment telling its story (refused without GitHub credentials)."),
  }),
  output: z.object({
    repo: z.string().describe("owner/name."),
    changed: z.boolean().describe("This call changed the stored settings."),
    settings: settingsView.describe("The stored settings."),
    effective: z
      .object({
        hotspots: z.array(hotspotRuleSchema.extend({ description: z.string().optional().describe("The default rule in words.") })).describe("The hotspot rules in force."),
        config_paths: z.array(z.string()).describe("The config path globs in force."),
        hotspots_default: z.boolean().describe("The hotspot rules are the default list."),
        config_paths_default: z.boolean().describe("The config paths are the default list."),
      })
      .describe("What a review uses: the stored lists, or the defaults written out."),
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
    if (input.pr_story !== undefined) patch.prStory = input.pr_story;

    const current = await reviewSettingsFor(ctx, key);
    let stored = current;
    if (Object.keys(patch).length > 0 && !sameSettings(current, { ...current, ...patch })) {
      if ((patch.publish === true && !current.publish) || (patch.prStory === true && !current.prStory)) await checkCanPublish(ctx, repo.owner, repo.name);
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
  summarize: (r) =>
    `${r.repo}: ${r.changed ? "settings updated" : "settings unchanged"}; reactive ${r.settings.reactive ? "on" : "off"}, publish ${r.settings.publish ? "on" : "off"}, pr_story ${r.settings.pr_story ? "on" : "off"}, ${r.effective.hotspots.length} hotspot rule(s)${r.effective.hotspots_default ? " (default)" : ""}.`,
});
