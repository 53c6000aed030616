/**
 * Publishing a finished reactive review as one pull-request review (event COMMENT): the summary
 * and the findings in the body, and an inline comment for each finding that sits on a line of the
 * diff. A refusal (no write access, the pull request gone) is the repository's choice, not a fault
 * of the session: it comes back as a warning and the session still completes.
 */
import { clip } from "../../core/text";
import { GitHubError, type GitHubClient } from "../../git/client";
import type { ReviewResult } from "./plan";
import type { Finding } from "../pipeline/types";

/** GitHub caps a review body at 65,536 characters; leave room for the footer. */
const MAX_BODY = 60_000;
const MAX_LISTED = 50;
const MAX_INLINE = 30;
const MAX_COMMENT = 2000;

/**
 * The new-side line numbers a review comment may point at in one file's patch: added and context
 * lines inside its hunks (GitHub refuses a comment on any other line).
 */
export function commentableLines(patch: string): Set<number> {
  const lines = new Set<number>();
  let next = 0;
  let inHunk = false;
  for (const line of patch.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      next = Number(hunk[1]);
      inHunk = true;
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith("+") || line.startsWith(" ")) lines.add(next++);
    // A removed line or "\ No newline at end of file" takes no new-side line.
  }
  return lines;
}

/** Text from a finding goes into GitHub markdown; keep it from closing the code span it is quoted in. */
const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
const where = (f: Finding) => `${f.location.file}:${f.location.startLine}`;

export function reviewBody(result: ReviewResult, sessionId: string): string {
  const listed = result.findings.slice(0, MAX_LISTED).map((f) => `- **${f.severity}** ${code(f.id)} ${clip(f.title, 200)} (${code(where(f))})`);
  const more = result.findings_total - listed.length;
  const parts = [
    "### Reactive review",
    "",
    result.summary,
    "",
    ...(listed.length ? [`**Findings** (${result.findings_total}):`, "", ...listed, ...(more > 0 ? [`- … and ${more} more`] : [])] : ["No findings."]),
    "",
    `<sub>agent-ledger session ${sessionId} · commit ${result.reviewed_commit.slice(0, 12)}</sub>`,
  ];
  return clip(parts.join("\n"), MAX_BODY);
}

export interface InlineComment {
  path: string;
  line: number;
  side: "RIGHT";
  body: string;
}

export function inlineComments(result: ReviewResult): InlineComment[] {
  return result.findings
    .filter((f) => f.inline)
    .slice(0, MAX_INLINE)
    .map((f) => ({
      path: f.location.file,
      line: f.location.startLine,
      side: "RIGHT" as const,
      body: clip(`**${f.severity}** ${f.title}\n\n${f.impact}\n\n**Recommendation:** ${f.recommendation}`, MAX_COMMENT),
    }));
}

/**
 * Names the review a session publishes for a commit, hidden in its body (GitHub renders no HTML
 * comment). It opens the body, so no clipping can cut it: a retry looks for it before posting.
 */
export const publishMarker = (sessionId: string, commit: string) => `<!-- agent-ledger review: session ${sessionId}, commit ${commit} -->`;

export type PublishOutcome =
  | { posted: true; id: number; url: string; inline: number; warning?: string; reused?: false }
  /** An earlier attempt had posted it (its answer was lost): found by its marker, not posted again. */
  | { posted: true; id: number; url: string; reused: true; warning?: undefined }
  | { posted: false; warning: string };

interface ListedReview {
  id: number;
  html_url: string;
  body: string | null;
}

const REVIEWS_PER_PAGE = 100;

/** The last page a Link header names (`<…&page=N>; rel="last"`), or 1 (the pull request story pages comments with it too). */
export function lastPage(link: string | null): number {
  for (const part of (link ?? "").split(",")) {
    const [target, ...attrs] = part.split(";");
    if (!attrs.some((a) => a.trim() === 'rel="last"')) continue;
    const url = target!.trim().replace(/^<|>$/g, "");
    const n = URL.canParse(url) ? Number(new URL(url).searchParams.get("page")) : NaN;
    return Number.isSafeInteger(n) && n > 1 ? Math.min(n, 100_000) : 1;
  }
  return 1;
}

/**
 * The review an earlier attempt posted, if any. GitHub lists reviews oldest first, so beside the
 * first page only the last two are read (a retry follows its attempt closely): at most three requests.
 */
async function findPublished(gh: Pick<GitHubClient, "request">, target: { owner: string; name: string; pullNumber: number }, marker: string): Promise<ListedReview | null> {
  const page = (n: number) =>
    gh.request<ListedReview[]>("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews", {
      owner: target.owner,
      repo: target.name,
      pull_number: target.pullNumber,
      per_page: REVIEWS_PER_PAGE,
      page: n,
    });
  const first = await page(1);
  const last = lastPage(first.headers.get("link"));
  const pages = [first.data];
  for (const n of [...new Set([last - 1, last])].filter((n) => n > 1)) pages.push((await page(n)).data);
  for (const reviews of pages) {
    const found = reviews.find((r) => typeof r.body === "string" && r.body.includes(marker));
    if (found) return found;
  }
  return null;
}

/**
 * Posts the review, once: a review an earlier attempt posted (found by its marker) is answered
 * instead, and so is one a failed POST turns out to have created (GitHub created it, the answer
 * was lost). 401, 403 and 404 are warnings (the credentials may not write reviews, or the pull
 * request is gone); a 422 with inline comments is tried once more without them (a line that is
 * no longer part of the diff); anything retryable is thrown for the session's backoff.
 */
export async function publishReview(
  gh: Pick<GitHubClient, "request">,
  target: { owner: string; name: string; pullNumber: number; commit: string },
  result: ReviewResult,
  sessionId: string,
): Promise<PublishOutcome> {
  const marker = publishMarker(sessionId, target.commit);
  const post = (comments: InlineComment[]) =>
    gh.request<{ id: number; html_url: string }>(
      "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
      { owner: target.owner, repo: target.name, pull_number: target.pullNumber },
      {
        commit_id: target.commit,
        body: `${marker}\n${reviewBody(result, sessionId)}`,
        event: "COMMENT",
        ...(comments.length ? { comments } : {}),
      },
    );
  const reused = (r: ListedReview): PublishOutcome => ({ posted: true, id: r.id, url: r.html_url, reused: true });
  const refused = (err: GitHubError) => ({ posted: false as const, warning: `The review was not published: GitHub answered ${err.status} (${clip(err.message, 300)}).` });
  const comments = inlineComments(result);
  try {
    const earlier = await findPublished(gh, target, marker);
    if (earlier) return reused(earlier);
    const res = await post(comments);
    return { posted: true, id: res.data.id, url: res.data.html_url, inline: comments.length };
  } catch (err) {
    if (!(err instanceof GitHubError)) throw err;
    if (err.retryable) {
      const created = await findPublished(gh, target, marker).catch(() => null);
      if (created) return reused(created);
      throw err;
    }
    if (err.status === 422 && comments.length > 0) {
      try {
        const res = await post([]);
        return { posted: true, id: res.data.id, url: res.data.html_url, inline: 0, warning: `GitHub refused the inline comments (${clip(err.message, 300)}); the review was posted without them.` };
      } catch (again) {
        if (again instanceof GitHubError && !again.retryable) return refused(again);
        throw again;
      }
    }
    if ([401, 403, 404, 422].includes(err.status)) return refused(err);
    throw err;
  }
}
