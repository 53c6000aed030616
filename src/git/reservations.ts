/**
 * Path reservations where the write happens: a commit, merge or cherry-pick through this server that
 * touches a path someone else holds exclusively is refused before its branch moves, and a holder's
 * write under a fencing token that is no longer live is refused too (src/work/reservations). Where
 * the client can ask its person, the refusal becomes a question; a confirmed override is logged and
 * its holders are told.
 */
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { iso } from "../core/time";
import { dbOf } from "../db/client";
import { actors } from "../db/schema";
import { parseRepoRef, repositoryByRemote } from "../work/repos/model";
import { normalizePath } from "../work/reservations/globs";
import { holdsToken, liveReservations, recordOverride, writeConflicts, type WriteConflict } from "../work/reservations/model";
import { confirmFirst } from "../core/confirm";
import type { Confirmation } from "../core/confirmer";
import type { GitWriter } from "./writer";
import { apiBase } from "./credentials";
import { githubHost } from "./repo";
import type { RepoName } from "./tokens";

export const fencingTokenField = z.number().int().min(1).optional().describe("Your path reservation's fencing token (path_reserve): the write is refused if that lease has expired or was released.");

/** The work ledger's registration of the repository a git tool writes, on the GitHub host this server talks to. */
async function registeredRepository(ctx: Ctx, repo: RepoName) {
  const parts = parseRepoRef(`${repo.owner}/${repo.name}`, githubHost(apiBase(ctx.env)));
  return parts ? repositoryByRemote(ctx, parts) : null;
}

/** Actors' names by id, for a refusal a person or an agent reads. */
async function actorNames(ctx: Ctx, ids: string[]): Promise<Map<string, string>> {
  const rows = await dbOf(ctx)
    .select({ id: actors.id, name: actors.name })
    .from(actors)
    .where(and(eq(actors.tenantId, ctx.tenantId), inArray(actors.id, ids)))
    .all();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** At most this many conflicts are named in the refusal; the rest are counted. */
const NAMED = 5;

/**
 * Refuses the write when another actor holds one of `paths` exclusively, or when `token` is not one
 * of the caller's live reservations. A repository nobody registered has no reservations.
 */
export async function assertPathsFree(ctx: Ctx, repo: RepoName, paths: readonly string[], token: number | undefined, tool: string): Promise<void> {
  const registered = await registeredRepository(ctx, repo);
  const now = iso(ctx.clock.now());
  if (token !== undefined && (!registered || !(await holdsToken(ctx.d1, ctx.tenantId, registered.id, ctx.actorId, token, now)))) {
    throw new ToolError("stale_fencing_token", `fencing_token ${token} is not a live reservation of yours in ${repo.owner}/${repo.name}; nothing was written.`, {
      hint: "Your lease expired or was released, and someone else may hold the paths now: check path_reservations, reserve again with path_reserve, and retry with its token.",
    });
  }
  if (!registered || paths.length === 0) return;
  const conflicts = await writeConflicts(ctx.d1, ctx.tenantId, registered.id, ctx.actorId, [...new Set(paths.map(normalizePath))], now);
  if (conflicts.length === 0) return;
  const shown = conflicts.slice(0, NAMED);
  const names = await actorNames(ctx, [...new Set(shown.map((c) => c.held.actor_id))]);
  const named = shown.map((c) => `${c.path} (held by ${names.get(c.held.actor_id) ?? c.held.actor_id} as ${c.held.pattern} until ${c.held.expires_at})`);
  const more = conflicts.length > NAMED ? ` and ${conflicts.length - NAMED} more` : "";
  const override = overrideQuestion(ctx, conflicts, `${named.join("; ")}${more}`);
  if (override) {
    // Throws to ask (a 2026-07-28 round trip, or a 2025 session's elicitation) and on a decline.
    await confirmFirst(ctx, override);
    await recordOverride(ctx, registered, conflicts, tool);
    return;
  }
  throw new ToolError("path_reserved", `Reserved by someone else: ${named.join("; ")}${more}. Nothing was written.`, {
    hint: "Ask the holder to release them (handoff_create), or wait for the lease to run out; path_reservations lists who holds what.",
    retryable: true,
  });
}

/**
 * The question a person may answer to write over reservations anyway, or null where nobody can be
 * asked: `confirm: true` from an agent alone never overrides a reservation, or the guard would be advice.
 */
function overrideQuestion(ctx: Ctx, conflicts: readonly WriteConflict[], named: string): Confirmation | null {
  const ids = [...new Set(conflicts.map((c) => c.held.id))].sort();
  const key = `override_reservations:${ids.join(",")}`.slice(0, 500);
  if (!ctx.confirmer || ctx.confirmer.answer(key) === "unavailable") return null;
  return { key, message: `This write touches paths reserved by someone else: ${named}. Write anyway? The holders will be told, and the override is logged.` };
}

/**
 * The same guard for a write whose paths are the difference of two trees (a merge or cherry-pick's
 * result against the branch it moves). The trees are listed only when the repository has live
 * reservations; a listing GitHub truncates cannot say which paths changed, so it is refused then.
 */
export async function assertTreeChangeFree(ctx: Ctx, w: GitWriter, fromTree: string, toTree: string, token: number | undefined, tool: string): Promise<void> {
  const registered = await registeredRepository(ctx, w.repo);
  const live = registered ? await liveReservations(ctx.d1, ctx.tenantId, registered.id, iso(ctx.clock.now())) : [];
  if (!live.some((r) => r.exclusive && r.actor_id !== ctx.actorId) || fromTree === toTree) return assertPathsFree(ctx, w.repo, [], token, tool);
  const [before, after] = await Promise.all([w.flatTree(fromTree), w.flatTree(toTree)]);
  if (!before || !after) {
    throw new ToolError("path_reserved", `${w.repo.owner}/${w.repo.name} has reserved paths and its tree is too large to list which paths this write changes. Nothing was written.`, {
      hint: "Ask the holders to release their reservations first (path_reservations lists them), then retry.",
      retryable: true,
    });
  }
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((p) => before.get(p) !== after.get(p));
  return assertPathsFree(ctx, w.repo, changed, token, tool);
}
