/**
 * Per-repository review settings (migrations/0031): which paths are hotspots and config, where
 * invariants live, whether pull requests are reviewed reactively and the review published, and
 * whether the server keeps a story comment on each pull request (src/coordination/story).
 * A repository without a row, or a review without a repository, takes the defaults: the
 * reference implementation's lists.
 */
import picomatch from "picomatch";
import { z } from "zod";
import { and, eq } from "drizzle-orm";
import { dbOf } from "../../db/client";
import { reviewSettings } from "../../db/schema";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";

/** A hotspot: an id reported when any changed path matches one of its globs (picomatch, case-insensitive, dot: true). */
export const hotspotRuleSchema = z.object({
  id: z.string().trim().min(1).max(60).describe("The id reported in hotspots (e.g. billing)."),
  paths: z.array(z.string().min(1).max(200)).min(1).max(20).describe("Globs over repository paths (e.g. src/billing/**)."),
});
export type HotspotRule = z.infer<typeof hotspotRuleSchema>;

export const DEFAULT_INVARIANTS_PATH = ".review-invariants.yml";

/**
 * How every settings glob is matched: case-insensitive and dotfiles included, as the reference's
 * `/…/i` patterns are. strictBrackets refuses an unbalanced [ { ( instead of reading it as text.
 */
export const SETTINGS_GLOB_OPTIONS = { nocase: true, dot: true, strictBrackets: true } as const;

/**
 * The reference's hotspot list (src/reviewer/checks/preflight.ts), written out as globs that match
 * the same paths as its regexes, with the rule in words. A repository whose hotspots are null uses
 * it, and so does a review without a repository: review_diff's preflight reads this list, not a copy.
 */
export const DEFAULT_HOTSPOTS: readonly (HotspotRule & { description: string })[] = [
  { id: "src/mcp", paths: ["src/mcp/**/*"], description: "anything under src/mcp/" },
  { id: "src/reactive", paths: ["src/reactive/**/*"], description: "anything under src/reactive/" },
  { id: "src/internal", paths: ["src/internal/**/*"], description: "anything under src/internal/" },
  { id: "src/http", paths: ["src/http/**/*"], description: "anything under src/http/" },
  {
    id: "auth",
    paths: ["**/{auth,oauth,jwt,token}", "**/{auth,oauth,jwt,token}/**"],
    description: "a path segment named auth, oauth, jwt or token",
  },
  {
    id: "security",
    paths: ["**/{security,crypto,tls,ssl}", "**/{security,crypto,tls,ssl}/**"],
    description: "a path segment named security, crypto, tls or ssl",
  },
];

/** The reference's config paths as globs (same matches as its regexes): what config_changed looks at by default. */
export const DEFAULT_CONFIG_PATHS: readonly string[] = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.?*.json",
  ".github/**/*",
  "dockerfile",
  "docker/**/*",
  "scripts/**/*",
  "**/*.yml",
  "**/*.yaml",
];

export const MAX_HOTSPOT_RULES = 30;
export const MAX_CONFIG_PATHS = 50;

/** Why a settings glob is refused, or null when it is usable: repository-relative, no `..`, balanced brackets. */
export function globProblem(glob: string): string | null {
  if (glob.trim() !== glob || glob.length === 0) return "has leading or trailing spaces, or is empty";
  if (glob.startsWith("/") || /^[A-Za-z]:/.test(glob)) return "is absolute; globs are relative to the repository root";
  if (glob.includes("\\")) return "contains a backslash; use forward slashes";
  if (glob.split("/").some((seg) => seg === ".." || seg === ".")) return "contains a '.' or '..' segment";
  try {
    picomatch.makeRe(glob, SETTINGS_GLOB_OPTIONS);
  } catch (err) {
    return `is not a valid glob (${err instanceof Error ? err.message : String(err)})`;
  }
  return null;
}

/** The lists a review uses: the stored ones, or the defaults where they are null. */
export function effectiveLists(s: Pick<ReviewSettings, "hotspots" | "configPaths">): { hotspots: HotspotRule[]; configPaths: string[] } {
  return {
    hotspots: s.hotspots ?? DEFAULT_HOTSPOTS.map(({ id, paths }) => ({ id, paths: [...paths] })),
    configPaths: s.configPaths ?? [...DEFAULT_CONFIG_PATHS],
  };
}

export interface ReviewSettings {
  /** null: the reference's hotspot ids (src/mcp, src/reactive, src/internal, src/http, auth, security). */
  hotspots: HotspotRule[] | null;
  /** null: the reference's config paths (package.json, package-lock.json, tsconfig*.json, .github/, dockerfile, docker/, scripts/, *.yml/*.yaml). */
  configPaths: string[] | null;
  invariantsPath: string;
  reactive: boolean;
  publish: boolean;
  /** Pull requests get the story comment (migrations/0048). */
  prStory: boolean;
  updatedAt: string | null;
  updatedBy: string | null;
}

export const DEFAULT_SETTINGS: ReviewSettings = {
  hotspots: null,
  configPaths: null,
  invariantsPath: DEFAULT_INVARIANTS_PATH,
  reactive: false,
  publish: false,
  prStory: false,
  updatedAt: null,
  updatedBy: null,
};

interface Row {
  hotspots: string | null;
  config_paths: string | null;
  invariants_path: string;
  reactive: number;
  publish: number;
  pr_story: number;
  updated_at: string;
  updated_by: string;
}

const parseList = <T>(json: string | null): T[] | null => (json === null ? null : (JSON.parse(json) as T[]));

/** The settings of a repository (key: owner/name lowercased, as repoKey gives it). */
export async function reviewSettingsFor(ctx: Pick<Ctx, "d1" | "tenantId">, repo: string): Promise<ReviewSettings> {
  const s = reviewSettings;
  const row: Row | undefined = await dbOf(ctx)
    .select({
      hotspots: s.hotspots,
      config_paths: s.configPaths,
      invariants_path: s.invariantsPath,
      reactive: s.reactive,
      publish: s.publish,
      pr_story: s.prStory,
      updated_at: s.updatedAt,
      updated_by: s.updatedBy,
    })
    .from(s)
    .where(and(eq(s.tenantId, ctx.tenantId), eq(s.repo, repo.toLowerCase())))
    .get();
  if (!row) return { ...DEFAULT_SETTINGS };
  return {
    hotspots: parseList<HotspotRule>(row.hotspots),
    configPaths: parseList<string>(row.config_paths),
    invariantsPath: row.invariants_path,
    reactive: row.reactive === 1,
    publish: row.publish === 1,
    prStory: row.pr_story === 1,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}

/**
 * Changes some settings of a repository; what `patch` leaves out keeps its value. null for
 * hotspots or configPaths goes back to the default list.
 */
export async function updateReviewSettings(
  ctx: Pick<Ctx, "d1" | "tenantId" | "actorName" | "clock">,
  repo: string,
  patch: Partial<Pick<ReviewSettings, "hotspots" | "configPaths" | "invariantsPath" | "reactive" | "publish" | "prStory">>,
): Promise<ReviewSettings> {
  const key = repo.toLowerCase();
  const next = { ...(await reviewSettingsFor(ctx, key)), ...patch };
  const now = iso(ctx.clock.now());
  // Every column but the key is written, on insert and on update alike.
  const values = {
    hotspots: next.hotspots === null ? null : JSON.stringify(next.hotspots),
    configPaths: next.configPaths === null ? null : JSON.stringify(next.configPaths),
    reactive: next.reactive ? 1 : 0,
    publish: next.publish ? 1 : 0,
    prStory: next.prStory ? 1 : 0,
    invariantsPath: next.invariantsPath,
    updatedAt: now,
    updatedBy: ctx.actorName,
  };
  await dbOf(ctx)
    .insert(reviewSettings)
    .values({ tenantId: ctx.tenantId, repo: key, ...values })
    .onConflictDoUpdate({ target: [reviewSettings.tenantId, reviewSettings.repo], set: values })
    .run();
  return { ...next, updatedAt: now, updatedBy: ctx.actorName };
}
