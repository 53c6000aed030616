/**
 * The code behind a prompt, as get_context_for_prompt answers it and create_plan grounds a plan in
 * it: the live indexes asked for (with their heads checked), the packed files, and whether any
 * index is behind its branch. One function, so both read the same code the same way.
 */
import { globMatcher } from "../core/glob";
import type { Ctx } from "../core/context";
import { cached } from "./cache";
import { packContext, type Packed } from "./context";
import type { IndexRow } from "./store";
import { checkHead, liveIndexes } from "./tools/common";

export interface PromptContextRequest {
  query: string;
  /** owner/name or a registered repository; every indexed one when absent. */
  repo?: string;
  maxFiles: number;
  tokenBudget: number;
  includeRelated: boolean;
  minRelevance: number;
  includePaths?: readonly string[];
  excludePaths?: readonly string[];
  /** Paths to put in first (an active plan's files). */
  pinned?: readonly string[];
  bypassCache: boolean;
}

export interface Freshness {
  /** Every index read is at its branch head (null: unknown). */
  fresh: boolean | null;
  warning: string;
}

export interface PromptContext {
  packed: Packed;
  indexes: IndexRow[];
  freshness: Freshness;
}

/** Throws index_not_found when no index is live (for `repo`, or for the tenant). */
export async function promptContext(ctx: Ctx, req: PromptContextRequest): Promise<PromptContext> {
  const indexes = await Promise.all((await liveIndexes(ctx, req.repo)).map((i) => checkHead(ctx, i)));
  const include = req.includePaths?.length ? globMatcher(req.includePaths) : () => true;
  const exclude = req.excludePaths?.length ? globMatcher(req.excludePaths) : () => false;
  const { bypassCache, ...keyed } = req;
  const key = ["prompt_context", indexes.map((i) => `${i.generation}@${i.commit_sha}`), keyed];
  const packed = await cached(ctx.tenantId, key, bypassCache, () =>
    packContext(ctx.env, ctx.tenantId, indexes, {
      query: req.query,
      maxFiles: req.maxFiles,
      tokenBudget: req.tokenBudget,
      includeRelated: req.includeRelated,
      minRelevance: req.minRelevance,
      pathFilter: (p) => include(p) && !exclude(p),
      pinned: req.pinned,
    }),
  );
  const behind = indexes.filter((i) => i.head_sha && i.head_sha !== i.commit_sha);
  return {
    packed,
    indexes,
    freshness: {
      fresh: indexes.every((i) => i.head_sha) ? behind.length === 0 : null,
      warning: behind
        .map((i) => `${i.owner}/${i.name}@${i.ref} is indexed at ${i.commit_sha.slice(0, 12)} but the branch is at ${i.head_sha.slice(0, 12)}; run index_workspace to catch up.`)
        .join(" "),
    },
  };
}
