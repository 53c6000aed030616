/**
 * Per-repository review settings (migrations/0031): which paths are hotspots and config, where
 * invariants live, and whether pull requests are reviewed reactively and the review published.
 * A repository without a row, or a review without a repository, takes the defaults: the
 * reference implementation's lists.
 */
import { z } from "zod";
import { iso } from "../db/time";
import type { Ctx } from "../mcp/context";

/** A hotspot: an id reported when any changed path matches one of its globs (picomatch, case-insensitive, dot: true). */
export const hotspotRuleSchema = z.object({
  id: z.string().trim().min(1).max(60).describe("The id reported in hotspots (e.g. billing)."),
  paths: z.array(z.string().min(1).max(200)).min(1).max(20).describe("Globs over repository paths (e.g. src/billing/**)."),
});
export type HotspotRule = z.infer<typeof hotspotRuleSchema>;

export const DEFAULT_INVARIANTS_PATH = ".review-invariants.yml";

export interface ReviewSettings {
  /** null: the reference's hotspot ids (src/mcp, src/reactive, src/internal, src/http, auth, security). */
  hotspots: HotspotRule[] | null;
  /** null: the reference's config paths (package.json, package-lock.json, tsconfig*.json, .github/, dockerfile, docker/, scripts/, *.yml/*.yaml). */
  configPaths: string[] | null;
  invariantsPath: string;
  reactive: boolean;
  publish: boolean;
  updatedAt: string | null;
  updatedBy: string | null;
}

export const DEFAULT_SETTINGS: ReviewSettings = {
  hotspots: null, configPaths: null, invariantsPath: DEFAULT_INVARIANTS_PATH, reactive: false, publish: false, updatedAt: null, updatedBy: null,
};

interface Row {
  hotspots: string | null;
  config_paths: string | null;
  invariants_path: string;
  reactive: number;
  publish: number;
  updated_at: string;
  updated_by: string;
}

const parseList = <T>(json: string | null): T[] | null => (json === null ? null : (JSON.parse(json) as T[]));

/** The settings of a repository (key: owner/name lowercased, as repoKey gives it). */
export async function reviewSettingsFor(ctx: Pick<Ctx, "d1" | "tenantId">, repo: string): Promise<ReviewSettings> {
  const row = await ctx.d1
    .prepare(`SELECT hotspots, config_paths, invariants_path, reactive, publish, updated_at, updated_by FROM review_settings WHERE tenant_id = ? AND repo = ?`)
    .bind(ctx.tenantId, repo.toLowerCase())
    .first<Row>();
  if (!row) return { ...DEFAULT_SETTINGS };
  return {
    hotspots: parseList<HotspotRule>(row.hotspots),
    configPaths: parseList<string>(row.config_paths),
    invariantsPath: row.invariants_path,
    reactive: row.reactive === 1,
    publish: row.publish === 1,
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
  patch: Partial<Pick<ReviewSettings, "hotspots" | "configPaths" | "invariantsPath" | "reactive" | "publish">>,
): Promise<ReviewSettings> {
  const key = repo.toLowerCase();
  const next = { ...(await reviewSettingsFor(ctx, key)), ...patch };
  const now = iso(ctx.clock.now());
  await ctx.d1
    .prepare(
      `INSERT INTO review_settings (tenant_id, repo, hotspots, config_paths, reactive, publish, invariants_path, updated_at, updated_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, repo) DO UPDATE SET hotspots = excluded.hotspots, config_paths = excluded.config_paths,
         reactive = excluded.reactive, publish = excluded.publish, invariants_path = excluded.invariants_path,
         updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
    )
    .bind(
      ctx.tenantId, key,
      next.hotspots === null ? null : JSON.stringify(next.hotspots),
      next.configPaths === null ? null : JSON.stringify(next.configPaths),
      next.reactive ? 1 : 0, next.publish ? 1 : 0, next.invariantsPath, now, ctx.actorName,
    )
    .run();
  return { ...next, updatedAt: now, updatedBy: ctx.actorName };
}
