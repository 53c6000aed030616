/**
 * A repository's files at a ref in one request: GitHub's tarball, read as it arrives (gzip, then
 * tar) and never held whole. Only eligible text files are kept (./eligible.ts); everything else is
 * counted under its reason and its bytes dropped as they pass. Reading stops at the first limit,
 * and the download is cancelled there, so a huge repository costs what the limits allow and no
 * more.
 */
import { createTarDecoder, type ParsedTarEntry } from "modern-tar";
import type { GitHubClient } from "../git/client";
import { isSafeRef, isSafeRepoPath, unsafeRef } from "../git/tokens";
import { ToolError } from "../core/errors";
import { contentEligibility, decodeText, DEFAULT_MAX_FILE_BYTES, HEAD_BYTES, pathEligibility, type SkipReason } from "./eligible";

export type { SkipReason } from "./eligible";

export interface ArchiveLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

/**
 * A Worker has 128 MB of memory for everything. The kept text is the big item: 64 MiB of mostly
 * ASCII source (V8 keeps such strings one byte a character) leaves room for the streams' buffers,
 * one file being read (at most 512 KiB) and the caller's own work on the files. 5,000 files bounds
 * the per-file overhead and the index's work per run.
 */
export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxFiles: 5_000, maxFileBytes: DEFAULT_MAX_FILE_BYTES, maxTotalBytes: 64 * 1024 * 1024 };

export interface RepoFile {
  path: string;
  size: number;
  text: string;
}

export interface ArchiveResult {
  /** The commit the archive is of. */
  commit: string;
  /** Eligible text files, path relative to the repository root, in archive order. */
  files: RepoFile[];
  skipped: Record<SkipReason, number>;
  /** The first 20 skipped files. */
  skipped_examples: Array<{ path: string; reason: SkipReason }>;
  /** A limit stopped the read early (the file that did not fit is counted as over_limit). */
  truncated: boolean;
  /** Compressed bytes received. */
  bytes_read: number;
}

const MAX_EXAMPLES = 20;
/** An example path is quoted at most this long (a hostile archive can carry megabyte names). */
const MAX_EXAMPLE_PATH = 300;

const DOTCOM_API = "https://api.github.com";
const CODELOAD = "https://codeload.github.com";

/**
 * Where an archive download may be redirected. From api.github.com only to codeload.github.com,
 * without the token (the Location carries a short-lived token of its own, and the tenant's token
 * has no business on another host); from GitHub Enterprise Server only to its own host, with the
 * token, since that host is the API's.
 */
export function archiveRedirectPolicy(apiOrigin: string): (target: URL) => { auth: boolean } {
  const allowed = apiOrigin === DOTCOM_API ? CODELOAD : apiOrigin;
  return (target) => {
    if (target.origin === allowed) return { auth: allowed === apiOrigin };
    throw new ToolError("archive_redirect_refused", `GitHub redirected the archive download to ${target.origin}; only ${allowed} is followed.`, {
      hint: `Archives are read only from ${allowed} for the API at ${apiOrigin}. Check that GITHUB_API_URL names the GitHub API the repository lives on; if it does, report the host GitHub redirected to.`,
    });
  };
}

/**
 * The eligible files of `repo` at `ref` (a branch, tag or commit). `only` keeps just those paths,
 * and reading stops once all of them have passed (an incremental re-index reads what a push
 * changed). GitHub failures are GitHubErrors with the client's codes (github_not_found for an
 * unknown repository or ref); a refused redirect is `archive_redirect_refused`, a download that is
 * not a whole gzipped tar `archive_unreadable`.
 */
export async function fetchRepoArchive(
  client: GitHubClient,
  repo: { owner: string; name: string },
  ref: string,
  opts: { limits?: ArchiveLimits; only?: ReadonlySet<string> } = {},
): Promise<ArchiveResult> {
  if (!isSafeRef(ref)) throw unsafeRef("ref", ref);
  const res = await client.stream("GET /repos/{owner}/{repo}/tarball/{ref}", { owner: repo.owner, repo: repo.name, ref }, archiveRedirectPolicy(client.origin));
  if (!res.body) throw unreadable("GitHub sent no archive body");
  return readArchive(res.body, ref, opts.limits ?? DEFAULT_ARCHIVE_LIMITS, opts.only);
}

const unreadable = (detail: string) =>
  new ToolError("archive_unreadable", `The repository archive could not be read: ${detail.slice(0, 300)}`, {
    hint: "Retry; the download was cut short or was not a gzipped tar archive.",
    retryable: true,
  });

class Tally {
  readonly files: RepoFile[] = [];
  readonly skipped: Record<SkipReason, number> = {
    binary: 0,
    vendored: 0,
    generated: 0,
    lockfile: 0,
    too_large: 0,
    over_limit: 0,
    not_text: 0,
    unsafe_path: 0,
  };
  readonly examples: Array<{ path: string; reason: SkipReason }> = [];
  totalBytes = 0;

  skip(path: string, reason: SkipReason): void {
    this.skipped[reason]++;
    if (this.examples.length < MAX_EXAMPLES) this.examples.push({ path: path.slice(0, MAX_EXAMPLE_PATH), reason });
  }
}

/** What the reader does after an entry: go on, or stop (a limit was hit, or everything wanted was seen). */
type Next = "continue" | "truncated" | "done";

async function readArchive(body: ReadableStream<Uint8Array>, ref: string, limits: ArchiveLimits, only?: ReadonlySet<string>): Promise<ArchiveResult> {
  let bytesRead = 0;
  // The download is read through a reader of our own, so stopping can cancel it directly and
  // wait for that: cancelling the tar reader at the far end of the chain does not reach it.
  const download = body.getReader();
  const counted = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await download.read();
        if (done) return controller.close();
        bytesRead += value.byteLength;
        controller.enqueue(value);
      },
      cancel: (reason) => download.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const entries = counted
    .pipeThrough(new DecompressionStream("gzip"))
    // Strict: a cut-off or corrupt archive is an error, never a shorter list of files passed off as whole.
    .pipeThrough(createTarDecoder({ strict: true }));
  const reader = entries.getReader();
  const tally = new Tally();
  let top: string | null = null;
  let commit: string | null = null;
  let remaining = only?.size ?? Infinity;
  let next: Next = "continue";
  let ended = false;
  try {
    while (next === "continue") {
      const step = await reader.read();
      if (step.done) {
        ended = true;
        break;
      }
      const entry = step.value;
      if (top === null) {
        top = entry.header.name.split("/")[0]!;
        commit = commitOf(entry.header.pax?.comment, ref, top);
        if (remaining === 0) break; // an empty `only`: the commit is all there is to learn
      }
      if (entry.header.type !== "file") {
        await entry.body.cancel();
        continue;
      }
      const path = entry.header.name.startsWith(`${top}/`) ? entry.header.name.slice(top.length + 1) : "";
      if (only && !only.has(path)) {
        await entry.body.cancel();
        continue;
      }
      next = await takeEntry(entry, path, limits, tally);
      if (only && next === "continue" && --remaining === 0) next = "done";
    }
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw unreadable(err instanceof Error ? err.message : String(err));
  } finally {
    if (!ended) {
      await reader.cancel().catch(() => {});
      await download.cancel().catch(() => {});
    }
  }
  commit ??= commitOf(undefined, ref, "");
  return {
    commit,
    files: tally.files,
    skipped: tally.skipped,
    skipped_examples: tally.examples,
    truncated: next === "truncated",
    bytes_read: bytesRead,
  };
}

/** Keeps one file entry if it is eligible and fits, else counts why not; its bytes are read only when it may be kept. */
async function takeEntry(entry: ParsedTarEntry, path: string, limits: ArchiveLimits, tally: Tally): Promise<Next> {
  if (!isSafeRepoPath(path)) {
    await entry.body.cancel();
    tally.skip(path || entry.header.name, "unsafe_path");
    return "continue";
  }
  const byPath = pathEligibility(path, entry.header.size, limits.maxFileBytes);
  if (byPath !== "ok") {
    await entry.body.cancel();
    tally.skip(path, byPath);
    return "continue";
  }
  const bytes = await readBody(entry.body, entry.header.size);
  if (typeof bytes === "string") {
    tally.skip(path, bytes);
    return "continue";
  }
  const text = decodeText(bytes);
  if (text === null) {
    tally.skip(path, "not_text");
    return "continue";
  }
  if (tally.files.length >= limits.maxFiles || tally.totalBytes + bytes.length > limits.maxTotalBytes) {
    tally.skip(path, "over_limit");
    return "truncated";
  }
  tally.files.push({ path, size: bytes.length, text });
  tally.totalBytes += bytes.length;
  return "continue";
}

/**
 * An entry's bytes (its size is already known to be within maxFileBytes). The head is checked as
 * soon as it has arrived: a binary or generated file is cancelled there rather than read on.
 */
async function readBody(body: ReadableStream<Uint8Array>, size: number): Promise<Uint8Array | SkipReason> {
  const bytes = new Uint8Array(size);
  let filled = 0;
  let headChecked = false;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (filled + value.byteLength > size) throw new Error("an entry is longer than its header says");
    bytes.set(value, filled);
    filled += value.byteLength;
    if (!headChecked && filled >= Math.min(HEAD_BYTES, size)) {
      headChecked = true;
      const verdict = contentEligibility(bytes.subarray(0, filled));
      if (verdict !== "ok") {
        await reader.cancel();
        return verdict;
      }
    }
  }
  if (filled !== size) throw new Error("an entry is shorter than its header says");
  if (!headChecked) {
    const verdict = contentEligibility(bytes);
    if (verdict !== "ok") return verdict;
  }
  return bytes;
}

const FULL_SHA = /^[0-9a-f]{40}$/i;

/**
 * The commit an archive is of. `git archive` (which makes GitHub's tarballs) writes the full commit
 * id in a pax global header's `comment` (what `git get-tar-commit-id` reads); failing that, a ref
 * that is a full sha names it; failing that, the top directory `owner-repo-<sha>` does, though
 * GitHub abbreviates that sha.
 */
function commitOf(paxComment: string | undefined, ref: string, top: string): string {
  if (paxComment && FULL_SHA.test(paxComment)) return paxComment.toLowerCase();
  if (FULL_SHA.test(ref)) return ref.toLowerCase();
  const fromTop = /-([0-9a-f]{7,40})$/i.exec(top)?.[1];
  if (fromTop) return fromTop.toLowerCase();
  throw unreadable("it names no commit (no pax comment, and the top directory is not owner-repo-<sha>)");
}
