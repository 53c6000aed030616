/**
 * The one comment a pull request's story lives in: posted once, edited after. Its id is kept per
 * (repository, pull request) in pr_story_comments; the body opens with STORY_MARKER, so an id that
 * was lost (the answer to the POST never came back, the row was reset) is found again among the
 * pull request's comments before anything is posted. A row with comment_id 0 and a fresh
 * claimed_at is a delivery posting right now: a second delivery at the same moment leaves it be
 * rather than post a second comment.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Ctx } from "../../core/context";
import { iso } from "../../core/time";
import { dbOf } from "../../db/client";
import { sha256Hex } from "../../db/ids";
import { prStoryComments } from "../../db/schema";
import { GitHubError, type GitHubClient } from "../../git/client";
import { lastPage } from "../../review/reactive-sessions/publish";

export const STORY_MARKER = "<!-- agent-ledger:story -->";

/** A claim older than this was cut off (its isolate went away): another delivery may take over. */
const CLAIM_MS = 2 * 60_000;
const COMMENTS_PER_PAGE = 100;

export interface StoryTarget {
  repositoryId: string;
  owner: string;
  name: string;
  number: number;
  headSha: string;
}

export type WriteOutcome =
  | { action: "posted" | "edited"; id: number; url: string }
  | { action: "unchanged"; id: number; url: string }
  /** Another delivery is posting the story this moment; the next event brings it up to date. */
  | { action: "busy" };

interface Row {
  comment_id: number;
  comment_url: string;
  body_hash: string;
}

interface ListedComment {
  id: number;
  html_url: string;
  body?: string | null;
}

const c = prStoryComments;
/** GitHub's answer for a comment that is gone, or that these credentials may not edit. */
const isRefusal = (err: unknown) => err instanceof GitHubError && [403, 404, 410].includes(err.status);
const rowOf = (ctx: Pick<Ctx, "tenantId">, t: StoryTarget) => and(eq(c.tenantId, ctx.tenantId), eq(c.repositoryId, t.repositoryId), eq(c.prNumber, t.number));

/** Marked comments tried at most: anyone can open a comment with the marker, and only ours can be edited. */
const MAX_MARKED = 3;

/**
 * The comments whose body opens with the marker, oldest first: the story an earlier attempt posted
 * is among them. GitHub lists issue comments oldest first and the story is posted when the pull
 * request opens, so the first page holds it; the last two pages are read too, for a story posted
 * late: at most three requests.
 */
async function findMarked(gh: Pick<GitHubClient, "request">, t: StoryTarget, not: number): Promise<ListedComment[]> {
  const page = (n: number) =>
    gh.request<ListedComment[]>("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", { owner: t.owner, repo: t.name, issue_number: t.number, per_page: COMMENTS_PER_PAGE, page: n });
  const first = await page(1);
  const last = lastPage(first.headers.get("link"));
  const pages = [first.data];
  for (const n of [...new Set([last - 1, last])].filter((n) => n > 1)) pages.push((await page(n)).data);
  const marked = pages.flat().filter((x) => x.id !== not && typeof x.body === "string" && x.body.startsWith(STORY_MARKER));
  return [...new Map(marked.map((x) => [x.id, x])).values()].slice(0, MAX_MARKED);
}

/**
 * Writes `body` as the pull request's story: edits the comment it already has (nothing when the
 * body is unchanged), or finds it by its marker, or posts it. A comment that is gone (deleted on
 * GitHub) or refused (not one these credentials may edit) is replaced by a new one.
 */
export async function writeStory(ctx: Pick<Ctx, "d1" | "tenantId" | "clock">, gh: Pick<GitHubClient, "request">, t: StoryTarget, body: string): Promise<WriteOutcome> {
  const db = dbOf(ctx);
  const hash = await sha256Hex(body);
  const now = () => iso(ctx.clock.now());
  const save = (id: number, url: string) =>
    db
      .update(c)
      .set({ commentId: id, commentUrl: url.slice(0, 500), bodyHash: hash, headSha: t.headSha, claimedAt: null, updatedAt: now() })
      .where(rowOf(ctx, t))
      .run();
  const patch = (id: number) => gh.request<ListedComment>("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}", { owner: t.owner, repo: t.name, comment_id: id }, { body });

  let refused = 0;
  for (let round = 0; round < 2; round++) {
    const row: Row | undefined = await db.select({ comment_id: c.commentId, comment_url: c.commentUrl, body_hash: c.bodyHash }).from(c).where(rowOf(ctx, t)).get();
    if (row && row.comment_id > 0) {
      if (row.body_hash === hash) return { action: "unchanged", id: row.comment_id, url: row.comment_url };
      try {
        const res = await patch(row.comment_id);
        await save(row.comment_id, res.data.html_url ?? row.comment_url);
        return { action: "edited", id: row.comment_id, url: res.data.html_url ?? row.comment_url };
      } catch (err) {
        if (!isRefusal(err)) throw err;
        // The comment is gone, or is not ours to edit: forget it and write the story anew.
        refused = row.comment_id;
        await db
          .update(c)
          .set({ commentId: 0, commentUrl: "", bodyHash: "", updatedAt: now() })
          .where(and(rowOf(ctx, t), eq(c.commentId, row.comment_id)))
          .run();
      }
    }
    // The claim: a compare-and-swap that only a row without a comment and without a live claim lets through.
    const at = now();
    const claimed = await db
      .insert(c)
      .values({ tenantId: ctx.tenantId, repositoryId: t.repositoryId, prNumber: t.number, commentId: 0, commentUrl: "", bodyHash: "", headSha: t.headSha, claimedAt: at, updatedAt: at })
      .onConflictDoUpdate({
        target: [c.tenantId, c.repositoryId, c.prNumber],
        set: { claimedAt: at, updatedAt: at },
        setWhere: sql`${c.commentId} = 0 AND (${c.claimedAt} IS NULL OR ${c.claimedAt} < ${iso(new Date(ctx.clock.now().getTime() - CLAIM_MS))})`,
      })
      .returning({ id: c.prNumber })
      .get();
    if (!claimed) continue;
    try {
      const marked = await findMarked(gh, t, refused);
      const same = marked.find((x) => x.body === body);
      if (same) {
        await save(same.id, same.html_url);
        return { action: "unchanged", id: same.id, url: same.html_url };
      }
      for (const earlier of marked) {
        try {
          const res = await patch(earlier.id);
          await save(earlier.id, res.data.html_url ?? earlier.html_url);
          return { action: "edited", id: earlier.id, url: res.data.html_url ?? earlier.html_url };
        } catch (err) {
          // Someone else's comment that opens with the marker: try the next, or post ours beside them.
          if (!isRefusal(err)) throw err;
        }
      }
      const res = await gh.request<ListedComment>("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", { owner: t.owner, repo: t.name, issue_number: t.number }, { body });
      await save(res.data.id, res.data.html_url);
      return { action: "posted", id: res.data.id, url: res.data.html_url };
    } catch (err) {
      // Let the next delivery try at once rather than wait out the claim.
      await db
        .update(c)
        .set({ claimedAt: null })
        .where(and(rowOf(ctx, t), eq(c.commentId, 0)))
        .run();
      throw err;
    }
  }
  return { action: "busy" };
}
