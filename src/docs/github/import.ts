/**
 * The document store's GitHub source (seed 003 `add` with `repo`): the files of a repository at a
 * ref, read with the tenant's credentials through the Git Data API (one commit lookup, a tree
 * walk down to `path`, one tree listing, one blob per file), enter the store through
 * ingestDocument with metadata naming where they came from.
 */
import { z } from "zod";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, statementOf } from "../../db/client";
import { uuidv7 } from "../../db/ids";
import { docGithubSources, docSnapshotEntries, docSnapshots, documents } from "../../db/schema";
import { iso } from "../../core/time";
import { GitHubError, type GitHubClient, type GitHubResponse, type Operation, type Params } from "../../git/client";
import { githubFor, githubToolError } from "../../git/credentials";
import { repoField, resolveRepo } from "../../git/repo";
import { assertSafeRef, type RepoName } from "../../git/tokens";
import { boundedJson, firstControl } from "../../core/bounds";
import type { Ctx } from "../../core/context";
import { excerpt, invalidInput, ToolError } from "../../core/errors";
import { knownMime } from "../extract/mime";
import { globMatcher } from "../../core/glob";
import { ingestDocument, type IndexStatus } from "../store/ingest";
import { MAX_DOCUMENT_BYTES, MAX_LABEL_CHARS, MAX_PATH_CHARS, MAX_TAG_CHARS, MAX_TAGS, normalizePath } from "../store/store";

/**
 * Files one call imports. Each file costs a GitHub request plus the store's own D1 and R2 calls
 * (about six), and a Worker invocation has about a thousand subrequests: bigger imports are
 * several calls with a narrower `path` or `include`.
 */
export const MAX_IMPORT_FILES = 100;
/** Bytes one call imports: blobs are held in memory one at a time, but each is decoded and hashed. */
export const MAX_IMPORT_BYTES = 32 * 1024 * 1024;
/** GitHub requests one import may make: the files, the commit lookup and a tree walk of reasonable depth. */
export const IMPORT_REQUEST_BUDGET = MAX_IMPORT_FILES + 60;
export const MAX_GLOBS = 32;
export const MAX_GLOB_CHARS = 256;

const globField = (what: string) =>
  z
    .array(z.string().min(1).max(MAX_GLOB_CHARS))
    .max(MAX_GLOBS)
    .optional()
    .describe(`${what} (picomatch globs, at most ${MAX_GLOBS}). A pattern without '/' matches the file name anywhere ('*.md'); one with '/' matches the path relative to \`path\` ('guide/**/*.md').`);

export const githubImportParams = z.object({
  repo: repoField,
  path: z.string().max(MAX_PATH_CHARS).default("").describe("A file or folder in the repository; '' or '/' is the repository root."),
  ref: z.string().max(256).optional().describe("Branch, tag or commit SHA to read. Defaults to the repository's default branch."),
  include: globField("Only import files matching one of these"),
  exclude: globField("Skip files matching one of these"),
  recursive: z.boolean().default(true).describe("For a folder: include its subfolders (default true)."),
  prefix: z
    .string()
    .max(MAX_PATH_CHARS)
    .optional()
    .describe("Store folder the files land in, keeping their paths below `path`. Defaults to `path` itself, so files keep their repository paths; '' or '/' is the store root."),
  tags: z.array(z.string().min(1).max(MAX_TAG_CHARS)).max(MAX_TAGS).optional().describe("Tags for every imported document."),
  metadata: boundedJson(z.record(z.string().max(256), z.unknown()), { maxBytes: 8192, maxDepth: 8 })
    .optional()
    .describe("Key-value metadata for every imported document (up to 8KB as JSON). The source keys source, github_repo, github_ref, github_commit and github_path are set by the import."),
  collection: z.string().min(1).max(MAX_LABEL_CHARS).optional().describe("Collection every imported document joins."),
  snapshot_label: z.string().min(1).max(MAX_LABEL_CHARS).optional().describe("Record one snapshot with this label holding every document this call imported."),
});

export type GitHubImportParams = z.input<typeof githubImportParams>;
type Parsed = z.output<typeof githubImportParams>;

export interface ImportedFile {
  path: string;
  hash: string;
  size: number;
  bytes_stored: number;
  bytes_deduped: number;
  /** pending: indexed in the background (a large file); else how it was indexed. */
  index_status: IndexStatus;
}

export interface GitHubImportResult {
  [key: string]: unknown;
  repo: string;
  ref: string;
  commit: string;
  imported: ImportedFile[];
  skipped: { path: string; reason: string }[];
  /** Files the unchanged-blob check spared re-reading (watch syncs only). */
  unchanged: number;
  /** Files under `path` that matched include/exclude, whether imported, skipped or left by a cap. */
  total_files: number;
  /** Matching files not attempted because a cap or the request budget was reached. */
  remaining: number;
  bytes_stored: number;
  bytes_deduped: number;
  truncated: boolean;
  /** Why the import stopped short and how to get the rest; present when truncated. */
  note?: string;
  snapshot_id: string | null;
  limits: { max_files: number; max_bytes: number; max_file_bytes: number };
}

// ---------------------------------------------------------------------------------------------
// Paths and globs

/**
 * A folder or file path given by the caller, in a repository or the store: slashes at either
 * end dropped, '.' and '..' refused rather than resolved (a path that climbs out of its folder is
 * a mistake or an attack), control characters refused. '' is the root.
 */
export function relativePath(raw: string, field: string): string {
  const at = firstControl(raw, true);
  if (at >= 0) throw invalidInput(`${field} '${excerpt(raw)}' contains a control character (code ${raw.charCodeAt(at)})`, `Remove control characters from ${field}.`);
  const segments = raw.split("/").filter((s) => s !== "");
  if (segments.some((s) => s === "." || s === "..")) {
    throw invalidInput(`${field} '${excerpt(raw)}' contains a '.' or '..' segment`, `Give ${field} relative to the root without '.' or '..', e.g. 'docs/guide'.`);
  }
  const path = segments.join("/");
  if (path.length > MAX_PATH_CHARS) throw invalidInput(`${field} is longer than ${MAX_PATH_CHARS} characters`, `Use a shorter ${field}.`);
  return path;
}

export const joinPath = (...parts: string[]) => parts.filter((p) => p !== "").join("/");

/** Whether `path` lies at or below the folder `dir` ('' contains everything). */
export const within = (path: string, dir: string) => dir === "" || path === dir || path.startsWith(`${dir}/`);

/** include/exclude as one predicate, each glob matched as everywhere in the store (src/core/glob.ts). */
export function pathFilter(include: string[] | undefined, exclude: string[] | undefined, fields = ["include", "exclude"]): (path: string) => boolean {
  const compile = (globs: string[] | undefined, field: string) => {
    if (!globs?.length) return null;
    for (const g of globs) {
      if (firstControl(g, true) >= 0) throw invalidInput(`${field} pattern '${excerpt(g)}' contains a control character`, `Remove control characters from ${field}.`);
    }
    return globMatcher(globs);
  };
  const inc = compile(include, fields[0]!);
  const exc = compile(exclude, fields[1]!);
  return (p) => (!inc || inc(p)) && !(exc && exc(p));
}

// ---------------------------------------------------------------------------------------------
// GitHub reads

type Requester = Pick<GitHubClient, "request">;

/**
 * GitHub requests a piece of work may make, shared by everything it calls: a push delivery that
 * syncs several watches spends one budget, so the whole delivery stays within a Worker's limits.
 */
export class RequestBudget implements Requester {
  private spent = 0;
  constructor(
    private readonly gh: Requester,
    readonly limit: number,
  ) {}

  get left(): number {
    return Math.max(0, this.limit - this.spent);
  }

  request<T>(op: Operation, params?: Params, body?: unknown): Promise<GitHubResponse<T>> {
    if (++this.spent > this.limit) {
      return Promise.reject(
        new ToolError("request_budget_exceeded", `This call would need more than ${this.limit} GitHub requests.`, {
          hint: "Narrow it (a smaller path, include patterns) or repeat the call: files already imported are not fetched again by a watch.",
          retryable: true,
        }),
      );
    }
    return this.gh.request<T>(op, params, body);
  }
}

const isMissing = (err: unknown) => err instanceof GitHubError && (err.code === "github_not_found" || err.code === "github_unprocessable");

const repoNotFound = (r: RepoName) =>
  new ToolError("repo_not_found", `Repository ${r.owner}/${r.name} was not found on GitHub, or the tenant's credentials cannot see it.`, {
    hint: "Check owner/name; a fine-grained token or App installation must include this repository.",
  });

const p = (r: RepoName) => ({ owner: r.owner, repo: r.name });

interface Resolved {
  ref: string;
  commit: string;
  tree: string;
}

/** The commit (and its tree) a ref names; the default branch when no ref is given. */
export async function resolveRef(gh: Requester, r: RepoName, ref: string | undefined): Promise<Resolved> {
  let name = ref;
  if (name === undefined) {
    try {
      name = (await gh.request<{ default_branch: string }>("GET /repos/{owner}/{repo}", p(r))).data.default_branch;
    } catch (err) {
      if (isMissing(err)) throw repoNotFound(r);
      throw err;
    }
  }
  try {
    const res = await gh.request<{ sha: string; commit: { tree: { sha: string } } }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...p(r), ref: name });
    return { ref: name, commit: res.data.sha, tree: res.data.commit.tree.sha };
  } catch (err) {
    if (!isMissing(err)) throw err;
    // One more request, only on this path, tells a missing repository from a missing ref.
    if (ref !== undefined) {
      try {
        await gh.request("GET /repos/{owner}/{repo}", p(r));
      } catch (inner) {
        if (isMissing(inner)) throw repoNotFound(r);
        throw inner;
      }
    }
    throw new ToolError("ref_not_found", `'${excerpt(name)}' is not a branch, tag or commit of ${r.owner}/${r.name}${ref === undefined ? " (the repository may be empty)" : ""}.`, {
      hint: "Pass an existing branch, tag or commit SHA as ref, or omit ref for the default branch.",
    });
  }
}

interface TreeItem {
  path: string;
  mode: string;
  type: string;
  sha: string;
  size?: number;
}

async function listTree(gh: Requester, r: RepoName, sha: string, recursive: boolean): Promise<{ items: TreeItem[]; truncated: boolean }> {
  const res = await gh.request<{ tree: TreeItem[]; truncated: boolean }>("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", { ...p(r), tree_sha: sha, ...(recursive ? { recursive: "1" } : {}) });
  return { items: res.data.tree, truncated: res.data.truncated };
}

export interface RepoFile {
  /** Path in the repository. */
  repoPath: string;
  /** Path below the imported folder (the file name for a single file). */
  rel: string;
  sha: string;
  size: number;
  mode: string;
  type: string;
}

export const pathNotFound = (path: string, repo: string, ref: string) =>
  new ToolError("path_not_found", `'${excerpt(path)}' does not exist in ${repo} at ${excerpt(ref)}.`, {
    hint: "Check the path (case matters) and ref; '' imports the repository root.",
  });

/**
 * The files at `path`: walks down the tree one level per segment (small listings, however large
 * the repository), then lists the folder once, recursively when asked. Only the root listing is
 * ever recursive over the whole repository, and only when the root itself is imported.
 */
export async function listSource(gh: Requester, r: RepoName, at: Resolved, path: string, recursive: boolean): Promise<{ kind: "file" | "dir"; base: string; files: RepoFile[] }> {
  let dir = at.tree;
  const segments = path === "" ? [] : path.split("/");
  for (const [i, seg] of segments.entries()) {
    const { items } = await listTree(gh, r, dir, false);
    const entry = items.find((e) => e.path === seg);
    const last = i === segments.length - 1;
    if (!entry || (!last && entry.type !== "tree")) throw pathNotFound(path, `${r.owner}/${r.name}`, at.ref);
    if (entry.type === "tree") {
      dir = entry.sha;
      continue;
    }
    const base = segments.slice(0, -1).join("/");
    return { kind: "file", base, files: [{ repoPath: path, rel: seg, sha: entry.sha, size: entry.size ?? 0, mode: entry.mode, type: entry.type }] };
  }
  const { items, truncated } = await listTree(gh, r, dir, recursive);
  if (truncated) {
    throw new ToolError("tree_too_large", `GitHub truncated the listing of '${path || "/"}' in ${r.owner}/${r.name}: it holds too many files to list at once.`, {
      hint: "Import a subfolder (path), or set recursive false and import the subfolders one by one.",
    });
  }
  const files = items.filter((e) => e.type !== "tree").map((e) => ({ repoPath: joinPath(path, e.path), rel: e.path, sha: e.sha, size: e.size ?? 0, mode: e.mode, type: e.type }));
  return { kind: "dir", base: path, files };
}

function decodeBase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ""));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function readBlob(gh: Requester, r: RepoName, sha: string): Promise<Uint8Array> {
  const res = await gh.request<{ content: string; encoding: string }>("GET /repos/{owner}/{repo}/git/blobs/{file_sha}", { ...p(r), file_sha: sha });
  if (res.data.encoding === "base64") return decodeBase64(res.data.content);
  if (res.data.encoding === "utf-8") return new TextEncoder().encode(res.data.content);
  throw new ToolError("github_error", `GitHub answered blob ${sha} in an encoding this server does not read (${excerpt(res.data.encoding, 20)}).`, {
    hint: "Retry; if it persists, report it with the repository and path.",
  });
}

/** Errors after which no further file can succeed in this call: stop, keep what was imported, say why. */
function stopsTheRun(err: unknown): boolean {
  if (err instanceof ToolError) return err.code === "request_budget_exceeded" || err.code === "github_not_configured";
  return err instanceof GitHubError && (err.code === "github_rate_limited" || err.code === "github_auth_failed" || err.code === "github_forbidden" || err.code === "github_unavailable");
}

// ---------------------------------------------------------------------------------------------
// The import

export interface ImportOptions {
  /** Skip files whose blob is the one the live document at their store path was imported from (watch syncs). */
  skipUnchanged?: boolean;
  maxFiles?: number;
}

export interface ImportRun {
  result: GitHubImportResult;
  /** Every repository path the listing held, filters and caps aside: what a watch compares removals against. */
  listed: Set<string>;
  kind: "file" | "dir";
  /** The folder whose files were listed ('' for the root). */
  base: string;
  prefix: string;
}

export interface ResolvedImport {
  repo: RepoName;
  path: string;
  prefix: string;
  filter: (rel: string) => boolean;
  params: Parsed;
}

/** Every check that needs no GitHub request; a refused import sends nothing and writes nothing. */
export async function prepareImport(ctx: Ctx, raw: GitHubImportParams): Promise<ResolvedImport> {
  const parsed = githubImportParams.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidInput(`${issue.path.join(".") || "params"}: ${issue.message}`, "Check the add parameters for a GitHub import with describe add.");
  }
  const params = parsed.data;
  const repo = await resolveRepo(ctx, params.repo);
  assertSafeRef("ref", params.ref);
  const path = relativePath(params.path, "path");
  const prefix = params.prefix === undefined ? undefined : relativePath(params.prefix, "prefix");
  const filter = pathFilter(params.include, params.exclude);
  return { repo, path, prefix: prefix ?? path, filter, params };
}

/** add with `repo`: imports the files at `path` (see githubImportParams) and reports each. */
export async function importFromGitHub(ctx: Ctx, raw: GitHubImportParams): Promise<GitHubImportResult> {
  const prepared = await prepareImport(ctx, raw);
  const gh = new RequestBudget(githubFor(ctx.env, ctx.tenantId), IMPORT_REQUEST_BUDGET);
  try {
    return (await runImport(ctx, gh, prepared)).result;
  } catch (err) {
    throw githubToolError(err);
  }
}

interface Planned extends RepoFile {
  storePath: string;
}

export async function runImport(ctx: Ctx, gh: Requester, prep: ResolvedImport, opts: ImportOptions = {}): Promise<ImportRun> {
  const { repo, params } = prep;
  const repoName = `${repo.owner}/${repo.name}`;
  const at = await resolveRef(gh, repo, params.ref);
  const source = await listSource(gh, repo, at, prep.path, params.recursive);
  // A single file keeps its name below the prefix; the default prefix is the file's own folder.
  const prefix = source.kind === "file" && params.prefix === undefined ? source.base : prep.prefix;
  const maxFiles = Math.min(opts.maxFiles ?? MAX_IMPORT_FILES, MAX_IMPORT_FILES);

  const skipped: { path: string; reason: string }[] = [];
  const planned: Planned[] = [];
  let matched = 0;
  let plannedBytes = 0;
  let remaining = 0;
  let note: string | undefined;
  const files = [...source.files].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  for (const f of files) {
    if (!prep.filter(f.rel)) continue;
    matched++;
    if (f.type === "commit") {
      skipped.push({ path: f.repoPath, reason: "submodule: its files live in another repository; import that repository instead" });
      continue;
    }
    if (f.mode === "120000") {
      skipped.push({ path: f.repoPath, reason: "symbolic link: the store keeps file contents, not links" });
      continue;
    }
    if (f.size > MAX_DOCUMENT_BYTES) {
      skipped.push({ path: f.repoPath, reason: `${f.size} bytes is over the ${MAX_DOCUMENT_BYTES}-byte document limit` });
      continue;
    }
    let storePath: string;
    try {
      storePath = normalizePath(joinPath(prefix, f.rel));
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      skipped.push({ path: f.repoPath, reason: `its store path is not valid: ${err.message}` });
      continue;
    }
    if (planned.length >= maxFiles || plannedBytes + f.size > MAX_IMPORT_BYTES) {
      remaining++;
      note ??= `Stopped at ${planned.length >= maxFiles ? `${maxFiles} files` : `${MAX_IMPORT_BYTES} bytes`} per call. Import the rest with a narrower path or include patterns (files are taken in path order; '${f.rel}' was the first left out).`;
      continue;
    }
    plannedBytes += f.size;
    planned.push({ ...f, storePath });
  }

  const known = opts.skipUnchanged
    ? await importedBlobs(
        ctx,
        planned.map((f) => f.storePath),
      )
    : new Map<string, string>();
  const imported: ImportedFile[] = [];
  const sources: SourceRow[] = [];
  const entries: { path: string; hash: string; size: number; mime: string }[] = [];
  let unchanged = 0;
  const now = iso(ctx.clock.now());
  try {
    for (const [i, f] of planned.entries()) {
      if (known.get(f.storePath) === f.sha) {
        unchanged++;
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = await readBlob(gh, repo, f.sha);
      } catch (err) {
        if (stopsTheRun(err)) {
          remaining += planned.length - i;
          const mapped = githubToolError(err);
          note = `Stopped after ${imported.length} file(s): ${mapped instanceof Error ? mapped.message : String(err)}${mapped instanceof ToolError && mapped.hint ? ` ${mapped.hint}` : ""}`;
          break;
        }
        if (err instanceof GitHubError || err instanceof ToolError) {
          skipped.push({ path: f.repoPath, reason: `could not be read from GitHub: ${err.message}` });
          continue;
        }
        throw err;
      }
      const mime = knownMime(f.storePath);
      let put;
      try {
        put = await ingestDocument(ctx, {
          path: f.storePath,
          bytes,
          mimeType: mime,
          tags: params.tags,
          metadata: { ...params.metadata, source: "github", github_repo: repoName, github_ref: at.ref, github_commit: at.commit, github_path: f.repoPath },
          collection: params.collection,
        });
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        skipped.push({ path: f.repoPath, reason: `${err.code}: ${err.message}` });
        continue;
      }
      imported.push({ path: put.path, hash: put.hash, size: put.size, bytes_stored: put.bytes_stored, bytes_deduped: put.bytes_deduped, index_status: put.index_status });
      entries.push({ path: put.path, hash: put.hash, size: put.size, mime: mime ?? "application/octet-stream" });
      sources.push({ path: put.path, repoKey: repoName.toLowerCase(), repoPath: f.repoPath, ref: at.ref, commit: at.commit, blob: f.sha, hash: put.hash, at: now });
    }
  } finally {
    // What was stored is recorded even when a later file failed the call, so a watch can skip it next time.
    await recordSources(ctx, sources);
  }

  const snapshotId = params.snapshot_label !== undefined && entries.length > 0 ? await recordSnapshot(ctx, params.snapshot_label, params.collection ?? null, entries) : null;
  const result: GitHubImportResult = {
    repo: repoName,
    ref: at.ref,
    commit: at.commit,
    imported,
    skipped,
    unchanged,
    total_files: matched,
    remaining,
    bytes_stored: imported.reduce((n, f) => n + f.bytes_stored, 0),
    bytes_deduped: imported.reduce((n, f) => n + f.bytes_deduped, 0),
    truncated: remaining > 0,
    snapshot_id: snapshotId,
    limits: { max_files: maxFiles, max_bytes: MAX_IMPORT_BYTES, max_file_bytes: MAX_DOCUMENT_BYTES },
  };
  if (note !== undefined) result.note = note;
  return { result, listed: new Set(source.files.map((f) => f.repoPath)), kind: source.kind, base: source.base, prefix };
}

// ---------------------------------------------------------------------------------------------
// Source records and the import's snapshot

interface SourceRow {
  path: string;
  repoKey: string;
  repoPath: string;
  ref: string;
  commit: string;
  blob: string;
  hash: string;
  at: string;
}

/** At most 100 bound parameters per D1 statement: rows go in groups. */
function groups<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function recordSources(ctx: Ctx, rows: SourceRow[]): Promise<void> {
  if (rows.length === 0) return;
  await ctx.d1.batch(
    groups(rows, 10).map((g) =>
      statementOf(
        ctx.d1,
        dbOf(ctx)
          .insert(docGithubSources)
          .values(
            g.map((r) => ({ tenantId: ctx.tenantId, path: r.path, repoKey: r.repoKey, repoPath: r.repoPath, ref: r.ref, commitSha: r.commit, blobSha: r.blob, docHash: r.hash, importedAt: r.at })),
          )
          .onConflictDoUpdate({
            target: [docGithubSources.tenantId, docGithubSources.path],
            set: {
              repoKey: sql`excluded.repo_key`,
              repoPath: sql`excluded.repo_path`,
              ref: sql`excluded.ref`,
              commitSha: sql`excluded.commit_sha`,
              blobSha: sql`excluded.blob_sha`,
              docHash: sql`excluded.doc_hash`,
              importedAt: sql`excluded.imported_at`,
            },
          }),
      ),
    ),
  );
}

/**
 * Store path → the blob its live document was imported from. A row whose document has since been
 * replaced (another hash) or deleted is not returned: that path is imported again.
 */
async function importedBlobs(ctx: Ctx, paths: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const s = alias(docGithubSources, "s");
  const d = alias(documents, "d");
  for (const g of groups(paths, 90)) {
    const rows = await dbOf(ctx)
      .select({ path: s.path, blob_sha: s.blobSha })
      .from(s)
      .innerJoin(d, and(eq(d.tenantId, s.tenantId), eq(d.path, s.path), isNull(d.deletedAt), eq(d.hash, s.docHash)))
      .where(and(eq(s.tenantId, ctx.tenantId), inArray(s.path, g)))
      .all();
    for (const r of rows) out.set(r.path, r.blob_sha);
  }
  return out;
}

/**
 * One snapshot for the whole import. The store's own snapshot_label makes one snapshot per put;
 * an import is one act, so its files are recorded together, in one atomic batch.
 */
async function recordSnapshot(ctx: Ctx, label: string, collection: string | null, entries: { path: string; hash: string; size: number; mime: string }[]): Promise<string> {
  const id = uuidv7(ctx.clock.now().getTime());
  await ctx.d1.batch([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .insert(docSnapshots)
        .values({ tenantId: ctx.tenantId, id, label, collection, createdAt: iso(ctx.clock.now()) }),
    ),
    ...groups(entries, 16).map((g) =>
      statementOf(
        ctx.d1,
        dbOf(ctx)
          .insert(docSnapshotEntries)
          .values(g.map((e) => ({ tenantId: ctx.tenantId, snapshotId: id, path: e.path, docHash: e.hash, size: e.size, mimeType: e.mime }))),
      ),
    ),
  ]);
  return id;
}
