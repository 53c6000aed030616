/**
 * restore (seed 003, execute): the documents of a collection or a snapshot, written out. There is
 * no filesystem here, so "out" is either a bundle in the response (path + content for the caller
 * to write) or, with `repo`, one commit on a GitHub branch made with the git tools' writer
 * (blobs, a tree on top of the branch head, a commit, the branch moved without force).
 */
import { z } from "zod";
import { githubFor } from "../../git/credentials";
import { repoField, resolveRepo } from "../../git/repo";
import { assertSafeRef, isSafeRepoPath } from "../../git/tokens";
import { type BlobMode, GitWriter, mappingGitHubErrors, type TreeEntry } from "../../git/writer";
import type { Ctx } from "../../core/context";
import { excerpt, invalidInput, notFound, ToolError } from "../../core/errors";
import { collectionExists, collectionFiles, type FileRef, snapshotById, snapshotFiles } from "../collections/model";
import { joinPath, MAX_GLOB_CHARS, MAX_GLOBS, pathFilter, relativePath } from "../github/import";
import { isLocalPath, noLocalFilesystem, quotedPath } from "../store/local-paths";
import { defineOp } from "../shared";
import { getDocument, MAX_LABEL_CHARS, MAX_PATH_CHARS } from "../store/store";

/** A bundle travels in the tool response; larger restores go to a repository or are filtered. */
export const MAX_BUNDLE_BYTES = 4 * 1024 * 1024;
/** Files one restore handles: each is read from the store (D1 + R2), and for GitHub may be a blob request. */
export const MAX_RESTORE_FILES = 200;
/** Bytes one commit carries: the tree request holds text inline, and the Worker holds every file until the commit. */
export const MAX_COMMIT_BYTES = 8 * 1024 * 1024;

const globs = (what: string) =>
  z
    .array(z.string().min(1).max(MAX_GLOB_CHARS))
    .max(MAX_GLOBS)
    .optional()
    .describe(`${what} (globs over the stored paths, at most ${MAX_GLOBS}); a pattern without '/' matches the file name ('*.md').`);

const params = z.object({
  collection: z.string().min(1).max(MAX_LABEL_CHARS).optional().describe("Restore the live documents of this collection. Give collection or snapshot_id, not both."),
  snapshot_id: z.string().min(1).max(64).optional().describe("Restore the documents recorded in this snapshot (an id from list_snapshots)."),
  output_directory: z
    .string()
    .max(MAX_PATH_CHARS)
    .optional()
    .describe(
      "Folder the files are written under: a relative prefix for the bundle's paths (a folder on your machine is refused: write the bundle there yourself), or the folder in the repository with repo ('/' is the repository root; required with repo).",
    ),
  dry_run: z.boolean().default(false).describe("List what would be written (and, with repo, which paths already exist) without reading contents or writing anything."),
  overwrite: z.boolean().default(false).describe("With repo: replace files that already exist at the target. When false they are left as they are and listed in skipped."),
  include_patterns: globs("Only restore documents matching one of these"),
  exclude_patterns: globs("Do not restore documents matching one of these"),
  repo: repoField.optional().describe("Commit the files to this GitHub repository (owner/name or a registered repository) instead of returning a bundle."),
  branch: z.string().max(256).optional().describe("With repo: the branch to commit on (default: the repository's default branch). A branch that does not exist is created from the default branch."),
  message: z.string().min(1).max(2000).optional().describe("With repo: the commit message (default: 'Restore N document(s) from …')."),
});

type Params = z.output<typeof params>;

type Source = FileRef;

/** The documents a restore covers, in path order: a collection's live documents or a snapshot's entries. */
async function selection(ctx: Ctx, p: Params): Promise<{ what: string; files: Source[] }> {
  if ((p.collection === undefined) === (p.snapshot_id === undefined)) {
    throw invalidInput("restore needs exactly one of collection or snapshot_id", "Pass collection (a name from list_collections) or snapshot_id (from list_snapshots), not both.");
  }
  if (p.collection !== undefined) {
    const files = await collectionFiles(ctx, p.collection);
    if (files.length === 0) {
      if (!(await collectionExists(ctx, p.collection))) throw notFound("collection", excerpt(p.collection), "List the collections with list_collections.");
    }
    return { what: `collection '${p.collection}'`, files };
  }
  const snap = await snapshotById(ctx, p.snapshot_id!);
  if (!snap) throw notFound("snapshot", excerpt(p.snapshot_id!), "List the snapshots with list_snapshots.");
  return { what: snap.label ? `snapshot '${snap.label}'` : `snapshot ${snap.id}`, files: await snapshotFiles(ctx, snap.id) };
}

const tooLarge = (what: string) =>
  new ToolError("restore_too_large", what, {
    hint: "Restore part of it: narrow include_patterns / exclude_patterns and repeat the call for the rest.",
  });

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** UTF-8 text without NUL travels as text; anything else as base64, so the bytes come back exactly. */
function asText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

async function bundle(ctx: Ctx, p: Params, files: Source[], outDir: string): Promise<Record<string, unknown>> {
  const total = files.reduce((n, f) => n + f.size, 0);
  if (!p.dry_run && total > MAX_BUNDLE_BYTES) {
    throw tooLarge(`The ${files.length} document(s) hold ${total} bytes; a bundle carries at most ${MAX_BUNDLE_BYTES} bytes (4 MiB).`);
  }
  const out: Record<string, unknown>[] = [];
  for (const f of files) {
    const item: Record<string, unknown> = { path: joinPath(outDir, f.path), hash: f.hash, size: f.size };
    if (!p.dry_run) {
      const doc = await getDocument(ctx, { hash: f.hash });
      const text = asText(doc.bytes);
      if (text !== null) item.content = text;
      else item.content_base64 = base64(doc.bytes);
    }
    out.push(item);
  }
  return { target: "bundle", output_directory: outDir, dry_run: p.dry_run, files: out, total_files: out.length, total_bytes: total };
}

async function toGitHub(ctx: Ctx, p: Params, what: string, files: Source[], outDir: string): Promise<Record<string, unknown>> {
  assertSafeRef("branch", p.branch);
  const targets = files.map((f) => ({ ...f, target: joinPath(outDir, f.path) }));
  const unsafe = targets.find((t) => !isSafeRepoPath(t.target));
  if (unsafe) throw invalidInput(`'${excerpt(unsafe.target)}' is not a path inside the repository`, "Pick an output_directory that keeps every path inside the repository.");
  const total = files.reduce((n, f) => n + f.size, 0);
  if (total > MAX_COMMIT_BYTES) throw tooLarge(`The ${files.length} document(s) hold ${total} bytes; one restore commits at most ${MAX_COMMIT_BYTES} bytes (8 MiB).`);
  const repo = await resolveRepo(ctx, p.repo!);

  return mappingGitHubErrors(async () => {
    const w = new GitWriter(githubFor(ctx.env, ctx.tenantId), repo);
    const fallback = await w.defaultBranch();
    const branch = p.branch ?? fallback;
    let head = await w.branchHead(branch);
    const created = head === null;
    if (head === null) {
      head = await w.branchHead(fallback);
      if (head === null) {
        throw new ToolError("branch_not_found", `Neither '${branch}' nor the default branch '${fallback}' exists in ${repo.owner}/${repo.name}.`, {
          hint: "Push an initial commit to the repository, or name an existing branch.",
        });
      }
    }
    const start = await w.commit(head);
    const listing = await w.treeListing(start.tree);
    if (listing === null && !p.overwrite) {
      throw new ToolError("tree_too_large", `GitHub truncated the listing of ${repo.owner}/${repo.name}, so which files already exist cannot be told.`, {
        hint: "Pass overwrite: true to write regardless, or restore into a repository with fewer files.",
      });
    }
    const existing = new Map((listing ?? []).map((e) => [e.path, e]));
    const planned: ((typeof targets)[number] & { exists: boolean; mode: BlobMode })[] = [];
    const skipped: { path: string; reason: string }[] = [];
    for (const t of targets) {
      const at = existing.get(t.target);
      // A folder in the way of a file, or a file in the way of a folder the path needs, cannot be written.
      const blockingFile = t.target
        .split("/")
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join("/"))
        .find((d) => existing.get(d)?.type === "blob");
      if (at?.type === "tree" || at?.type === "commit") skipped.push({ path: t.target, reason: "a folder or submodule is at this path" });
      else if (blockingFile) skipped.push({ path: t.target, reason: `'${blockingFile}' is a file, so no folder can be made there` });
      else if (at && !p.overwrite) skipped.push({ path: t.target, reason: "exists (overwrite is false)" });
      else planned.push({ ...t, exists: at !== undefined, mode: at?.mode === "100755" ? "100755" : "100644" });
    }
    const listed = planned.map((f) => ({ path: f.target, source_path: f.path, hash: f.hash, size: f.size, exists: f.exists }));
    const base = {
      target: "github",
      repo: `${repo.owner}/${repo.name}`,
      branch,
      output_directory: outDir,
      dry_run: p.dry_run,
      skipped,
      total_files: planned.length,
      total_bytes: planned.reduce((n, f) => n + f.size, 0),
    };
    if (p.dry_run) return { ...base, commit: null, created_branch: false, files: listed };

    const entries: TreeEntry[] = [];
    for (const f of planned) {
      const doc = await getDocument(ctx, { hash: f.hash });
      const text = asText(doc.bytes);
      if (text !== null) entries.push({ path: f.target, mode: f.mode, type: "blob", content: text });
      else entries.push({ path: f.target, mode: f.mode, type: "blob", sha: await w.createBlob(base64(doc.bytes), "base64") });
    }
    if (entries.length === 0) return { ...base, commit: null, created_branch: false, files: listed, note: "Nothing to write." };
    const tree = await w.createTree(start.tree, entries);
    if (tree === start.tree) return { ...base, commit: null, created_branch: false, files: listed, note: "Every file already has this content; no commit was made." };
    const message = p.message ?? `Restore ${entries.length} document(s) from ${what}`;
    const sha = await w.createCommit(message, tree, [head]);
    if (created) await w.createBranch(branch, sha);
    else await w.moveBranch(branch, head, sha);
    return { ...base, commit: sha, created_branch: created, files: listed };
  });
}

export const restoreOp = defineOp({
  name: "restore",
  category: "execute",
  description:
    "Restore the documents of a collection or snapshot: as a bundle of {path, content | content_base64} (at most 4 MiB), or with repo as one commit on a GitHub branch under output_directory (existing files kept unless overwrite). dry_run lists the paths without writing.",
  params,
  async run(ctx, p) {
    if (p.repo === undefined && (p.branch !== undefined || p.message !== undefined)) {
      throw invalidInput("branch and message only apply when restoring to a repository", "Pass repo (owner/name) too, or leave branch and message out for a bundle.");
    }
    if (p.repo === undefined && p.output_directory !== undefined && isLocalPath(p.output_directory)) {
      throw noLocalFilesystem(
        `restore cannot write to ${quotedPath(p.output_directory)} on your machine`,
        "Leave output_directory out (or give a relative prefix such as 'restored') to get the files back as a bundle of {path, content} to write yourself, or pass repo (and branch) to commit them to a GitHub branch under output_directory.",
      );
    }
    if (p.repo !== undefined && p.output_directory === undefined) {
      throw invalidInput("restore needs output_directory when writing to a repository", "Pass the folder in the repository to restore into, e.g. 'docs/restored' ('/' for the root).");
    }
    const outDir = relativePath(p.output_directory ?? "", "output_directory");
    const filter = pathFilter(p.include_patterns, p.exclude_patterns, ["include_patterns", "exclude_patterns"]);
    const { what, files: all } = await selection(ctx, p);
    const files = all.filter((f) => filter(f.path));
    if (files.length > MAX_RESTORE_FILES) {
      throw tooLarge(`${files.length} documents match; one restore handles at most ${MAX_RESTORE_FILES}.`);
    }
    return p.repo === undefined ? bundle(ctx, p, files, outDir) : toGitHub(ctx, p, what, files, outDir);
  },
});
