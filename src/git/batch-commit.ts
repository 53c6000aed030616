/**
 * batch_commit (seed 002) over the Git Data API: there is no working tree, so each entry carries
 * its files' contents. Entries become commits in order on top of the branch head; the branch is
 * moved once, without force, to the last commit that succeeded.
 */
import { z } from "zod";
import { defineTool } from "../core/define-tool";
import { invalidInput, ToolError } from "../core/errors";
import { GitHubError } from "./client";
import { MAX_ARG_BYTES } from "../core/bounds";
import { githubFor } from "./credentials";
import { compact, formatField, gitErrorText } from "./output";
import { repoField } from "./repo";
import { pickedRepo, pickFields } from "./workspace";
import { assertPathsFree, fencingTokenField } from "./reservations";
import { assertSafeRef, isSafeRepoPath } from "./tokens";
import { type BlobMode, confirmBranchWrite, GitWriter, mappingGitHubErrors, type TreeEntry } from "./writer";

/** Per file, after decoding; GitHub's blob API takes far more, but a tool call should stay small. */
const MAX_FILE_BYTES = 1024 * 1024;
/** A call cannot carry more than the registry lets any call carry. */
const MAX_TOTAL_BYTES = MAX_ARG_BYTES;
/** Each base64 file is one blob request; this keeps a call inside the writer's request budget. */
const MAX_TOTAL_FILES = 500;

/** A hosted remote has no separate push: the Git Data API writes the remote branch itself. */
const PUSH_NOTE = "Committed through the GitHub API: the commits are already on the remote branch, there is nothing to push.";

const fileField = z
  .object({
    path: z.string().min(1).max(4096).describe("Path relative to the repository root (no leading '/', no '..' segments)."),
    content: z
      .string()
      .max(Math.ceil((MAX_FILE_BYTES * 4) / 3) + 4)
      .optional()
      .describe("The file's whole new content (at most 1 MiB). Omit when delete is true."),
    encoding: z.enum(["utf-8", "base64"]).default("utf-8").describe('"utf-8" (default) for text, or "base64" for binary content.'),
    delete: z.boolean().default(false).describe("true to delete the file in this commit instead of writing it."),
  })
  .strict();

const input = z.object({
  repo: repoField.optional(),
  ...pickFields,
  branch: z.string().max(256).optional().describe("The branch to commit on. Defaults to the repository's default branch."),
  base: z.string().max(256).optional().describe("When `branch` does not exist yet: create it from this branch or commit. Ignored when the branch exists."),
  commits: z
    .array(
      z
        .object({
          message: z.string().min(1).max(20_000).describe("The commit message."),
          files: z.array(fileField).min(1).max(100).describe("The files this commit writes or deletes (1–100)."),
        })
        .strict(),
    )
    .min(1)
    .max(50)
    .describe("Commits to create, in order (1–50). Processing stops at the first failure."),
  push: z
    .union([z.enum(["never", "after"]), z.boolean()])
    .default("never")
    .describe(
      'The seed\'s push: "never" (default) or "after" (true is the same). Commits made here are already on GitHub, so "after" pushes nothing; the result reports push as done once every commit landed.',
    ),
  fencing_token: fencingTokenField,
  format: formatField,
});

const resultItem = z.object({
  index: z.number().int().describe("The entry's position in `commits`."),
  ok: z.boolean().describe("Whether this entry became a commit."),
  sha: z.string().optional().describe("The new commit's SHA."),
  message: z.string().describe("The entry's message."),
  files: z.array(z.string()).describe("The entry's paths."),
  error: z.string().optional().describe("path_escapes_repository, stage_failed or commit_failed."),
  detail: z.string().optional().describe("What failed, in GitHub's words where it answered."),
});

const output = z.object({
  ok: z.boolean().describe("true when every entry was committed."),
  branch: z.string().describe("The branch committed on."),
  created: z.boolean().optional().describe("true when the branch was created by this call."),
  headSha: z.string().optional().describe("The branch head after the call, when anything landed."),
  committed: z.number().int().describe("Entries committed (they precede any failed entry)."),
  total: z.number().int().describe("Entries given."),
  results: z.array(resultItem).describe("One per committed entry, then the failed one; later entries are not attempted."),
  push: z
    .object({
      ok: z.boolean().describe("true: the commits are on the remote branch."),
      branch: z.string().describe("The branch."),
      upstream: z.string().describe("origin/<branch>: the branch on GitHub is its own upstream."),
      note: z.string().describe("Why nothing was pushed."),
    })
    .optional()
    .describe('Only when push "after" was asked and every commit landed, as the seed.'),
});

type Result = z.input<typeof output>;
type Item = z.input<typeof resultItem>;

const decodedSize = (content: string, encoding: string) => (encoding === "base64" ? Math.floor((content.replace(/=+$/, "").length * 3) / 4) : new TextEncoder().encode(content).length);

/** Refusals that need no request: the whole call is refused and nothing is sent to GitHub. */
function validate(data: z.output<typeof input>): Result | null {
  assertSafeRef("branch", data.branch);
  assertSafeRef("base", data.base);
  const files = data.commits.reduce((sum, c) => sum + c.files.length, 0);
  if (files > MAX_TOTAL_FILES) throw invalidInput(`The call lists ${files} files; the cap is ${MAX_TOTAL_FILES}.`, "Split the commits over several calls.");
  let total = 0;
  for (const [index, entry] of data.commits.entries()) {
    const seen = new Set<string>();
    for (const f of entry.files) {
      if (!isSafeRepoPath(f.path)) {
        // The seed reports this per entry; here it is found before anything is written, so nothing lands.
        return {
          ok: false,
          branch: data.branch ?? "",
          committed: 0,
          total: data.commits.length,
          results: [
            {
              index,
              ok: false,
              message: entry.message,
              files: entry.files.map((x) => x.path),
              error: "path_escapes_repository",
              detail: `'${f.path.slice(0, 200)}' is not a path inside the repository.`,
            },
          ],
        };
      }
      if (seen.has(f.path)) throw invalidInput(`commits[${index}] lists '${f.path}' twice.`, "List each path once per commit.");
      seen.add(f.path);
      if (f.delete) {
        if (f.content !== undefined) throw invalidInput(`commits[${index}] '${f.path}': delete and content together.`, "Either give content, or delete: true.");
        continue;
      }
      if (f.content === undefined) throw invalidInput(`commits[${index}] '${f.path}' has no content.`, "Give the file's whole content, or delete: true to remove it.");
      if (f.encoding === "base64" && !/^[A-Za-z0-9+/]*={0,2}$/.test(f.content.replace(/\s+/g, ""))) {
        throw invalidInput(`commits[${index}] '${f.path}': content is not base64.`, 'Encode binary content as base64, or use encoding "utf-8" for text.');
      }
      const size = decodedSize(f.content, f.encoding);
      if (size > MAX_FILE_BYTES) throw invalidInput(`commits[${index}] '${f.path}' is ${size} bytes; the cap is ${MAX_FILE_BYTES}.`, "Commit large files another way (git push, Git LFS).");
      total += size;
    }
  }
  if (total > MAX_TOTAL_BYTES) throw invalidInput(`The call carries ${total} bytes of content; the cap is ${MAX_TOTAL_BYTES}.`, "Split the commits over several calls.");
  return null;
}

/**
 * What the branch holds, path → mode, kept current through the batch: a rewritten file keeps its
 * mode (an executable stays executable), and a path that is a directory is refused. Null when
 * GitHub truncated the listing (a very large tree): files are then written as plain files.
 */
type Modes = Map<string, string> | null;

async function treeEntries(w: GitWriter, files: z.output<typeof fileField>[], modes: Modes): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  for (const f of files) {
    const existing = modes?.get(f.path);
    const mode: BlobMode = existing === "100755" || existing === "120000" ? existing : "100644";
    if (f.delete) out.push({ path: f.path, mode, type: "blob", sha: null });
    else if (f.encoding === "base64") out.push({ path: f.path, mode, type: "blob", sha: await w.createBlob(f.content!.replace(/\s+/g, ""), "base64") });
    else out.push({ path: f.path, mode, type: "blob", content: f.content! });
  }
  return out;
}

function applyModes(modes: Modes, entries: TreeEntry[]): void {
  for (const e of entries) {
    if (e.sha === null) modes?.delete(e.path);
    else modes?.set(e.path, e.mode);
  }
}

async function currentModes(w: GitWriter, tree: string): Promise<Modes> {
  const listing = await w.treeListing(tree);
  return listing && new Map(listing.map((e) => [e.path, e.mode]));
}

const failed = (err: unknown) => {
  if (err instanceof GitHubError) return err.message;
  throw err;
};

export const batchCommit = defineTool({
  name: "batch_commit",
  title: "Commit several changes in order",
  description:
    "Create several commits in order on a GitHub branch in one call, without a checkout: each entry {message, files: [{path, content} | {path, delete: true}]} becomes one commit on top of the previous. Stops at the first failure; the branch then points at the last commit that succeeded. The branch is moved without force: if someone pushed meanwhile the call fails with a retryable conflict and nothing changes. `branch` defaults to the default branch; a missing branch is created from `base`. Mutating, not idempotent.",
  toolset: "git",
  input,
  output,
  cost: { items: "commits" },
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  confirms: true,
  async run(ctx, data) {
    const refused = validate(data);
    if (refused) return refused;
    return mappingGitHubErrors(async () => {
      const w = new GitWriter(githubFor(ctx.env, ctx.tenantId), await pickedRepo(ctx, data, "batch_commit commits to a repository"));
      // Before anything is sent to GitHub: someone else's reserved paths, or a lease that ended.
      await assertPathsFree(
        ctx,
        w.repo,
        data.commits.flatMap((c) => c.files.map((f) => f.path)),
        data.fencing_token,
        "batch_commit",
      );
      const branch = data.branch ?? (await w.defaultBranch());
      await confirmBranchWrite(ctx, w, branch, `Commit ${data.commits.length} commit${data.commits.length === 1 ? "" : "s"}`);
      let head = await w.branchHead(branch);
      let created = false;
      if (!head) {
        if (data.base === undefined) {
          throw new ToolError("branch_not_found", `Branch '${branch}' does not exist.`, { hint: "Pass `base` (a branch or commit) to create it from, or an existing branch." });
        }
        head = (await w.branchHead(data.base)) ?? (await w.resolveCommit(data.base));
        if (!head) throw new ToolError("base_not_found", `base '${data.base}' is neither a branch nor a commit.`, { hint: "Pass an existing branch or commit SHA as base." });
        created = true;
      }
      const start = await w.commit(head);
      let cur = { sha: start.sha, tree: start.tree };
      const modes = await currentModes(w, start.tree);
      const results: Item[] = [];
      for (const [index, entry] of data.commits.entries()) {
        const item: Item = { index, ok: false, message: entry.message, files: entry.files.map((f) => f.path) };
        results.push(item);
        const directory = entry.files.find((f) => modes?.get(f.path) === "040000");
        if (directory) {
          Object.assign(item, { error: "stage_failed", detail: `'${directory.path}' is a directory; list the files inside it.` });
          break;
        }
        let entries: TreeEntry[];
        try {
          entries = await treeEntries(w, entry.files, modes);
        } catch (err) {
          Object.assign(item, { error: "stage_failed", detail: failed(err) });
          break;
        }
        try {
          const tree = await w.createTree(cur.tree, entries);
          if (tree === cur.tree) {
            Object.assign(item, { error: "commit_failed", detail: "nothing to commit: the files already have this content" });
            break;
          }
          cur = { sha: await w.createCommit(entry.message, tree, [cur.sha]), tree };
          applyModes(modes, entries);
        } catch (err) {
          Object.assign(item, { error: "commit_failed", detail: failed(err) });
          break;
        }
        Object.assign(item, { ok: true, sha: cur.sha });
        await ctx.progress?.(index + 1, data.commits.length, `committed ${index + 1} of ${data.commits.length}`);
      }
      const committed = results.filter((r) => r.ok).length;
      if (committed > 0) {
        if (created) await w.createBranch(branch, cur.sha);
        else await w.moveBranch(branch, head, cur.sha);
      }
      const pushed = (data.push === "after" || data.push === true) && committed === data.commits.length ? { ok: true, branch, upstream: `origin/${branch}`, note: PUSH_NOTE } : undefined;
      return {
        ok: committed === data.commits.length,
        branch,
        created: created && committed > 0,
        headSha: committed > 0 ? cur.sha : undefined,
        committed,
        total: data.commits.length,
        results,
        push: pushed,
      };
    });
  },
  errorText: gitErrorText,
  text(result, data) {
    if (data.format === "json") return JSON.stringify(compact(result));
    const lines = [`# batch_commit ${result.ok ? "ok" : "stopped"}: ${result.committed}/${result.total} committed on ${result.branch}${result.created ? " (created)" : ""}`];
    for (const r of result.results) {
      lines.push(r.ok ? `- [${r.index}] ${r.sha?.slice(0, 7)} ${r.message.split("\n")[0]}` : `- [${r.index}] **${r.error}**: ${r.detail ?? ""}`);
    }
    if (result.push) lines.push(`push: ${result.push.note}`);
    return lines.join("\n");
  },
});
