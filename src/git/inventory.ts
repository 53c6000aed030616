/**
 * git_inventory and git_parity over GitHub. The seed's nested roots become repositories
 * (owner/name) and its parity paths become `owner/name@ref`; presets supply either.
 */
import { z } from "zod";
import { invalidInput, ToolError } from "../core/errors";
import { GitHubError } from "./client";
import { findPreset, type ParityPair, pairSchema, presetMergeField, presetNameField, type PresetSource } from "./presets";
import { cell, defaultBranch, errorCode, fullName, type Git, gitReadTool, isNotFound, mapLimit, rethrowFatal, repoNotFound, repoParams, statusHeader } from "./read-tool";
import { resolveRepo, repoField } from "./repo";
import { assertSafeRef, isSafeRef, type RepoName } from "./tokens";

/** Resolved with the tenant's registered repositories too; null when the text names no repository. */
async function tryResolve(git: Git, text: string): Promise<RepoName | null> {
  try {
    return await resolveRepo(git.ctx, text);
  } catch (err) {
    if (err instanceof ToolError && err.code === "invalid_repo") return null;
    throw err;
  }
}

async function presetFor(git: Git, input: { preset?: string; repo?: string }): Promise<{ source: PresetSource; nestedRoots: string[]; parityPairs: ParityPair[] } | null> {
  if (!input.preset) return null;
  const where = input.repo ? await resolveRepo(git.ctx, input.repo) : null;
  const { entry, source } = await findPreset(git, input.preset, where);
  return { source, nestedRoots: entry.nestedRoots ?? [], parityPairs: entry.parityPairs ?? [] };
}

/** The seed's presetMerge: false → inline wins when non-empty; true → both (repositories de-duplicated). */
function merged<T>(inline: T[] | undefined, fromPreset: T[], merge: boolean): T[] {
  if (!merge) return inline?.length ? inline : fromPreset;
  return [...(inline ?? []), ...fromPreset];
}

// ---------------------------------------------------------------------------------------------
// git_inventory

/** A remote is `origin` (the repository itself) or the owner of a fork in the same network. */
const isSafeUpstreamToken = (t: string) => t.length <= 256 && !t.includes("..") && !t.startsWith("-") && /^[A-Za-z0-9_./+-]+$/.test(t);
const FORK_OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

const entrySchema = z.object({
  label: z.string().describe("The repository as named (owner/name)."),
  path: z.string().describe("The repository resolved (owner/name)."),
  upstreamMode: z.enum(["auto", "fixed"]).describe("auto: against the default branch; fixed: against remote/branch."),
  branchStatus: z.string().optional().describe("A `git status -b` style header: ## ref...upstream [ahead N, behind M]."),
  headAbbrev: z.string().optional().describe("The inspected ref's head commit, 7 characters."),
  upstreamRef: z.string().optional().describe("The upstream compared with (origin/<default> or remote/branch)."),
  ahead: z.string().optional().describe("Commits on the ref not on the upstream (a string, as the seed's rev-list --count)."),
  behind: z.string().optional().describe("Commits on the upstream not on the ref."),
  upstreamNote: z.string().optional().describe('"tracking <ref>", "upstream <ref> (counts unreadable)" or "(no local ref <ref> or unreadable)".'),
  skipReason: z.string().optional().describe("Why the repository was skipped (not owner/name, not found, ref missing)."),
});
type Entry = z.input<typeof entrySchema>;

const inventorySchema = z.object({
  workspace_root: z.string().describe('The repository the call was anchored on (repo), or "tenant".'),
  presetSchemaVersion: z.union([z.number(), z.string()]).optional().describe("The preset file's schemaVersion, when a preset came from one."),
  nestedRootsTruncated: z.boolean().optional().describe("True when more repositories were in scope than max_roots."),
  nestedRootsOmittedCount: z.number().int().optional().describe("How many were left out."),
  upstream: z
    .object({ mode: z.literal("fixed"), remote: z.string().describe("The remote."), branch: z.string().describe("The branch.") })
    .optional()
    .describe("The fixed upstream (only when remote and branch were given)."),
  entries: z.array(entrySchema).describe("One entry per repository."),
});

interface Upstream {
  remote: string;
  branch: string;
}

async function inventoryEntry(git: Git, label: string, ref: string | undefined, upstream: Upstream | null): Promise<Entry> {
  const mode = upstream ? "fixed" : "auto";
  const r = await tryResolve(git, label);
  if (!r) return { label, path: label, upstreamMode: mode, skipReason: "(not owner/name or a registered repository — rejected)" };
  const base: Entry = { label, path: fullName(r), upstreamMode: mode };
  const p = repoParams(r);
  let dflt = "";
  if (!upstream || !ref) {
    try {
      dflt = await defaultBranch(git, r);
    } catch (err) {
      if (err instanceof ToolError && err.code === "repo_not_found") return { ...base, skipReason: "(repository not found or not visible — skip)" };
      throw err;
    }
  }
  const inspected = ref ?? dflt;
  let sha: string;
  try {
    sha = (await git.gh.request<{ commit: { sha: string } }>("GET /repos/{owner}/{repo}/branches/{branch}", { ...p, branch: inspected })).data.commit.sha;
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return { ...base, skipReason: upstream && ref && !dflt ? `(repository or branch ${inspected} not found — skip)` : `(no branch ${inspected} — skip)` };
  }
  const upstreamRef = upstream ? `${upstream.remote}/${upstream.branch}` : `origin/${dflt}`;
  const withHead = { ...base, headAbbrev: sha.slice(0, 7), upstreamRef };
  if (!upstream && inspected === dflt) {
    return { ...withHead, branchStatus: statusHeader(inspected, upstreamRef, 0, 0), ahead: "0", behind: "0", upstreamNote: `tracking ${upstreamRef}` };
  }
  const upstreamSide = !upstream || upstream.remote === "origin" ? (upstream?.branch ?? dflt) : `${upstream.remote}:${upstream.branch}`;
  try {
    const cmp = await git.gh.request<{ ahead_by: number; behind_by: number }>("GET /repos/{owner}/{repo}/compare/{basehead}", { ...p, basehead: `${upstreamSide}...${inspected}`, per_page: 1 });
    const { ahead_by: ahead, behind_by: behind } = cmp.data;
    return { ...withHead, branchStatus: statusHeader(inspected, upstreamRef, ahead, behind), ahead: String(ahead), behind: String(behind), upstreamNote: `tracking ${upstreamRef}` };
  } catch (err) {
    if (isNotFound(err)) return { ...withHead, branchStatus: `## ${inspected}`, upstreamNote: `(no local ref ${upstreamRef} or unreadable)` };
    rethrowFatal(err);
    if (err instanceof GitHubError) {
      return { ...withHead, branchStatus: `## ${inspected}`, upstreamNote: `upstream ${upstreamRef} (counts unreadable)` };
    }
    throw err;
  }
}

/** The seed's maxRoots: default 64, at most 256. */
const MAX_ROOTS = 256;
const DEFAULT_ROOTS = 64;
/** Requests per entry (default branch, branch head, compare), plus the preset file's few. */
const INVENTORY_BUDGET = 3 * MAX_ROOTS + 20;

export const gitInventoryTool = gitReadTool({
  fanOut: true,
  name: "git_inventory",
  title: "Ahead/behind across repositories",
  description:
    "For each repository in scope (repos, a preset's nestedRoots, or else repo), where a branch (ref, default: the default branch) stands against its upstream: auto mode compares with the default branch (origin/<default>); passing both remote and branch fixes the upstream (remote origin = the repository itself, or a fork owner in the same network). Entries carry the seed's notes and skip reasons; over max_roots the list is truncated (nestedRootsTruncated, nestedRootsOmittedCount). Up to 3 GitHub requests per repository.",
  input: z.object({
    repo: repoField.optional(),
    repos: z
      .array(repoField)
      .min(1)
      .max(MAX_ROOTS)
      .optional()
      .describe(`Repositories to inventory (the seed's nestedRoots), each owner/name or a registered repository; at most ${MAX_ROOTS}, those beyond max_roots are counted, not read.`),
    nested_roots: z.array(repoField).min(1).max(MAX_ROOTS).optional().describe("The seed's name for repos (nestedRoots): give one or the other."),
    preset: presetNameField,
    preset_merge: presetMergeField,
    ref: z.string().min(1).max(256).optional().describe("The branch to inspect in each repository (default: its default branch)."),
    remote: z.string().min(1).max(256).optional().describe('Fixed upstream remote: "origin" (the repository itself) or a fork owner. Give with branch.'),
    branch: z.string().min(1).max(256).optional().describe("Fixed upstream branch. Give with remote."),
    max_roots: z
      .number()
      .int()
      .min(1)
      .max(MAX_ROOTS)
      .default(DEFAULT_ROOTS)
      .describe(`At most this many repositories (1–${MAX_ROOTS}, default ${DEFAULT_ROOTS}, the seed's figures); the rest are counted in nestedRootsOmittedCount.`),
  }),
  output: z.object({ inventories: z.array(inventorySchema).describe("One inventory (the seed's per-root shape).") }),
  requestBudget: INVENTORY_BUDGET,
  run: async (git, input) => {
    if ((input.remote === undefined) !== (input.branch === undefined)) {
      throw new ToolError("remote_branch_mismatch", "Pass both remote and branch for a fixed upstream, or neither for auto mode.", { hint: 'e.g. remote: "origin", branch: "main".' });
    }
    if (
      input.remote !== undefined &&
      (!isSafeUpstreamToken(input.remote) || !isSafeUpstreamToken(input.branch!) || !isSafeRef(input.branch!) || (input.remote !== "origin" && !FORK_OWNER.test(input.remote)))
    ) {
      throw new ToolError("invalid_remote_or_branch", "remote or branch is not a safe token.", {
        hint: 'remote is "origin" or a GitHub owner; branch is a branch name of [A-Za-z0-9_./+-] without .. or a leading -.',
      });
    }
    assertSafeRef("ref", input.ref);
    if (!input.repo && !input.repos?.length && !input.nested_roots?.length && !input.preset) {
      throw new ToolError("invalid_input", "Name what to inventory: repo, repos or preset.", { hint: "Pass repos (owner/name list), a preset name, or repo for one repository." });
    }
    if (input.nested_roots && input.repos)
      throw invalidInput("repos and nested_roots were both given; nested_roots is the seed's name for repos.", "Give the repositories once, in repos or nested_roots.");
    const repos = input.repos ?? input.nested_roots;
    // Inline repositories are the caller's input: refused before any request. A preset's are data, skipped per entry.
    for (const ref of repos ?? []) await resolveRepo(git.ctx, ref);
    const preset = await presetFor(git, input);
    const inline = repos ?? [];
    let labels = merged(inline, preset?.nestedRoots ?? [], input.preset_merge);
    if (labels.length === 0 && input.repo) labels = [input.repo];
    labels = [...new Map(labels.map((l) => [l.trim().toLowerCase(), l.trim()])).values()];
    const kept = labels.slice(0, input.max_roots);
    const upstream = input.remote ? { remote: input.remote, branch: input.branch! } : null;
    const entries = await mapLimit(kept, 4, (label) => inventoryEntry(git, label, input.ref, upstream));
    const omitted = labels.length - kept.length;
    return {
      inventories: [
        {
          workspace_root: input.repo ?? "tenant",
          presetSchemaVersion: preset?.source.presetSchemaVersion,
          nestedRootsTruncated: omitted > 0,
          nestedRootsOmittedCount: omitted || undefined,
          upstream: upstream ? { mode: "fixed" as const, ...upstream } : undefined,
          entries,
        },
      ],
    };
  },
  markdown: (result) => {
    const lines = ["# git_inventory"];
    for (const inv of result.inventories) {
      lines.push("", `### ${inv.workspace_root}`);
      if (inv.upstream) lines.push(`Upstream (fixed): ${inv.upstream.remote}/${inv.upstream.branch}`);
      lines.push("| repository | status | head | ahead | behind | note |", "|---|---|---|---|---|---|");
      for (const e of inv.entries) {
        lines.push(`| ${cell(e.label)} | ${cell(e.branchStatus ?? e.skipReason)} | ${e.headAbbrev ?? ""} | ${e.ahead ?? ""} | ${e.behind ?? ""} | ${cell(e.upstreamNote)} |`);
      }
      if (inv.nestedRootsTruncated) lines.push("", `(${inv.nestedRootsOmittedCount} more repositories omitted: raise max_roots)`);
    }
    return lines.join("\n");
  },
});

// ---------------------------------------------------------------------------------------------
// git_parity

const MAX_PAIRS = 50;

/** `owner/name@ref` (ref optional: the default branch). */
function splitSide(text: string): { repo: string; ref?: string } {
  const at = text.lastIndexOf("@");
  return at > 0 ? { repo: text.slice(0, at), ref: text.slice(at + 1) } : { repo: text };
}

const pairRowSchema = z.object({
  label: z.string().describe('The pair\'s label (default "left / right").'),
  leftPath: z.string().describe("The left side as given."),
  rightPath: z.string().describe("The right side as given."),
  match: z.boolean().optional().describe("True when both heads are the same commit (omitted otherwise)."),
  sha: z.string().optional().describe("The common head, when they match."),
  leftSha: z.string().optional().describe("The left head, when they differ."),
  rightSha: z.string().optional().describe("The right head, when they differ."),
  error: z.string().optional().describe("Why the pair could not be compared."),
});

const paritySchema = z.object({
  workspace_root: z.string().describe('The repository the call was anchored on (repo), or "tenant".'),
  presetSchemaVersion: z.union([z.number(), z.string()]).optional().describe("The preset file's schemaVersion, when a preset came from one."),
  status: z.enum(["OK", "MISMATCH"]).describe("OK only when every pair matches."),
  pairs: z.array(pairRowSchema).describe("One row per pair."),
});

function checkSide(text: string): string | null {
  const { repo, ref } = splitSide(text);
  if (ref !== undefined && !isSafeRef(ref)) return `unsafe ref '${ref.slice(0, 100)}' — rejected`;
  if (!repo) return "no repository — rejected";
  return null;
}

export const gitParityTool = gitReadTool({
  name: "git_parity",
  title: "Compare head commits",
  description: `Compare the head commits of pairs of refs: each side is owner/name@ref (a branch, tag or SHA; without @ref the default branch). Pairs come from pairs and/or a preset's parityPairs (preset_merge). status is OK only when every pair matches. At most ${MAX_PAIRS} pairs; one GitHub request per distinct side.`,
  input: z.object({
    repo: repoField.optional().describe("The repository whose .rethunk/git-mcp-presets.json may hold the preset (and the label of the result)."),
    pairs: z.array(pairSchema).max(MAX_PAIRS).optional().describe("Pairs to compare: {left, right, label?}, each side owner/name@ref."),
    preset: presetNameField,
    preset_merge: presetMergeField,
  }),
  output: z.object({ parity: z.array(paritySchema).describe("One parity report (the seed's per-root shape).") }),
  run: async (git, input) => {
    for (const pair of input.pairs ?? []) {
      for (const side of [pair.left, pair.right]) {
        const { repo, ref } = splitSide(side);
        assertSafeRef("ref", ref);
        await resolveRepo(git.ctx, repo);
      }
    }
    const preset = await presetFor(git, input);
    const pairs = merged(input.pairs, preset?.parityPairs ?? [], input.preset_merge).slice(0, MAX_PAIRS);
    if (pairs.length === 0) throw new ToolError("no_pairs", "No pairs to compare after preset resolution.", { hint: "Pass pairs [{left, right}] (owner/name@ref), or a preset with parityPairs." });
    const heads = new Map<string, Promise<string>>();
    const headOf = (side: string) => {
      let p = heads.get(side);
      if (!p) {
        p = (async () => {
          const { repo, ref } = splitSide(side);
          const r = await tryResolve(git, repo);
          if (!r) throw new ToolError("invalid_repo", "not owner/name — rejected");
          try {
            const res = await git.gh.request<Array<{ sha: string }>>("GET /repos/{owner}/{repo}/commits", { ...repoParams(r), sha: ref, per_page: 1 });
            if (!res.data[0]) throw new ToolError("ref_not_found", `${side}: no commits`);
            return res.data[0].sha;
          } catch (err) {
            if (!isNotFound(err)) throw err;
            await defaultBranch(git, r).catch(() => {
              throw repoNotFound(r);
            });
            throw new ToolError("ref_not_found", `${side}: ref not found`);
          }
        })();
        heads.set(side, p);
      }
      return p;
    };
    const rows = await mapLimit(pairs, 4, async (pair) => {
      const label = pair.label ?? `${pair.left} / ${pair.right}`;
      const base = { label, leftPath: pair.left, rightPath: pair.right };
      const unsafe = checkSide(pair.left) ?? checkSide(pair.right);
      if (unsafe) return { ...base, error: unsafe };
      try {
        const [l, r] = await Promise.all([headOf(pair.left), headOf(pair.right)]);
        return l === r ? { ...base, match: true, sha: l } : { ...base, leftSha: l, rightSha: r };
      } catch (err) {
        rethrowFatal(err);
        if (err instanceof ToolError) return { ...base, error: err.code === "invalid_repo" || err.code === "ref_not_found" ? err.message : err.code };
        return { ...base, error: errorCode(err) };
      }
    });
    return {
      parity: [
        {
          workspace_root: input.repo ?? "tenant",
          presetSchemaVersion: preset?.source.presetSchemaVersion,
          status: rows.every((r) => "match" in r && r.match) ? ("OK" as const) : ("MISMATCH" as const),
          pairs: rows,
        },
      ],
    };
  },
  markdown: (result) => {
    const lines = ["# git_parity"];
    for (const p of result.parity) {
      lines.push("", `### ${p.workspace_root}: ${p.status}`, "| pair | result |", "|---|---|");
      for (const row of p.pairs) {
        const outcome = row.error ? `error: ${row.error}` : row.match ? `match ${row.sha?.slice(0, 7)}` : `differ ${row.leftSha?.slice(0, 7)} ≠ ${row.rightSha?.slice(0, 7)}`;
        lines.push(`| ${cell(row.label)} | ${cell(outcome)} |`);
      }
    }
    return lines.join("\n");
  },
});
