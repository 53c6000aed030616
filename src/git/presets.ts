/**
 * Presets (seed 002): named sets of repositories (nestedRoots) and parity pairs. They come from
 * two places: the tenant's own store (table git_presets, written by `npm run github -- set-preset`)
 * and `.rethunk/git-mcp-presets.json` in a repository, read through the contents API. A name in
 * the tenant's store wins over the same name in a file.
 */
import { eq } from "drizzle-orm";
import { z } from "zod";
import { dbOf } from "../db/client";
import { gitPresets } from "../db/schema";
import { ToolError } from "../core/errors";
import { decodeBase64 } from "./contents";
import { cleanText } from "./untrusted";
import { cell, defaultBranch, fullName, type Git, gitReadTool, isNotFound, repoNotFound, repoParams } from "./read-tool";
import { resolveRepo, repoField } from "./repo";
import { assertSafeRef, type RepoName } from "./tokens";

export const PRESET_FILE = ".rethunk/git-mcp-presets.json";
export const TENANT_PRESETS = "ledger:git_presets";
const MAX_FILE_BYTES = 256 * 1024;

const pairSchema = z.object({
  left: z.string().min(1).max(400).describe("owner/name@ref (ref defaults to the default branch)."),
  right: z.string().min(1).max(400).describe("owner/name@ref (ref defaults to the default branch)."),
  label: z.string().max(200).optional().describe('Row label (default "left / right").'),
});
export type ParityPair = z.infer<typeof pairSchema>;

export const presetEntrySchema = z.object({
  nestedRoots: z.array(z.string().max(200)).max(256).optional(),
  parityPairs: z.array(pairSchema).max(256).optional(),
  workspaceRootHint: z.string().max(200).optional(),
});
export type PresetEntry = z.infer<typeof presetEntrySchema>;

export interface PresetSource {
  workspaceRoot: string;
  presetFile: string;
  fileExists: boolean;
  presetSchemaVersion?: number | string;
  presets: Map<string, PresetEntry>;
  error?: { error: "preset_file_invalid"; kind: "invalid_json" | "schema" | "too_large"; message?: string; issues?: string[] };
}

export { pairSchema };

export async function tenantPresets(git: Git): Promise<PresetSource> {
  const rows = await dbOf(git.ctx)
    .select({ name: gitPresets.name, nested_roots: gitPresets.nestedRoots, parity_pairs: gitPresets.parityPairs, workspace_root_hint: gitPresets.workspaceRootHint })
    .from(gitPresets)
    .where(eq(gitPresets.tenantId, git.ctx.tenantId))
    .orderBy(gitPresets.name)
    .all();
  const presets = new Map<string, PresetEntry>();
  for (const r of rows) {
    const parsed = presetEntrySchema.safeParse({ nestedRoots: JSON.parse(r.nested_roots), parityPairs: JSON.parse(r.parity_pairs), workspaceRootHint: r.workspace_root_hint || undefined });
    if (parsed.success) presets.set(r.name, parsed.data);
  }
  return { workspaceRoot: "tenant", presetFile: TENANT_PRESETS, fileExists: true, presets };
}

/** Both shapes the seed reads: `{schemaVersion, presets: {…}}`, or a flat map (schemaVersion/$schema ignored as keys). */
export function parsePresetFile(text: string, source: Omit<PresetSource, "presets" | "fileExists" | "error">): PresetSource {
  const base = { ...source, fileExists: true, presets: new Map<string, PresetEntry>() };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ...base, error: { error: "preset_file_invalid", kind: "invalid_json", message: err instanceof Error ? err.message : String(err) } };
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) return { ...base, error: { error: "preset_file_invalid", kind: "schema", issues: ["the file must hold a JSON object"] } };
  const obj = json as Record<string, unknown>;
  const wrapped = obj.presets && typeof obj.presets === "object" && !Array.isArray(obj.presets);
  const map = (wrapped ? obj.presets : obj) as Record<string, unknown>;
  const version = obj.schemaVersion;
  const issues: string[] = [];
  for (const [name, value] of Object.entries(map)) {
    if (!wrapped && (name === "schemaVersion" || name === "$schema")) continue;
    const parsed = presetEntrySchema.safeParse(value);
    if (parsed.success) base.presets.set(name, parsed.data);
    else issues.push(...parsed.error.issues.map((i) => `${[name, ...i.path].join(".")}: ${i.message}`));
  }
  const withVersion = typeof version === "number" || typeof version === "string" ? { ...base, presetSchemaVersion: version } : base;
  if (issues.length > 0) return { ...withVersion, presets: new Map(), error: { error: "preset_file_invalid", kind: "schema", issues: issues.slice(0, 20) } };
  return withVersion;
}

/** The preset file in a repository at `ref` (default branch when absent); a missing file is not an error. */
export async function repoPresets(git: Git, r: RepoName, ref?: string): Promise<PresetSource> {
  const source = { workspaceRoot: fullName(r), presetFile: `${fullName(r)}:${PRESET_FILE}` };
  try {
    const res = await git.gh.request<{ type?: string; content?: string; size?: number } | unknown[]>("GET /repos/{owner}/{repo}/contents/{path}", { ...repoParams(r), path: PRESET_FILE, ref });
    const file = res.data;
    if (Array.isArray(file) || file.type !== "file") return { ...source, fileExists: false, presets: new Map() };
    if ((file.size ?? 0) > MAX_FILE_BYTES || file.content === undefined) {
      return { ...source, fileExists: true, presets: new Map(), error: { error: "preset_file_invalid", kind: "too_large", message: `larger than ${MAX_FILE_BYTES} bytes` } };
    }
    return parsePresetFile(decodeBase64(file.content), source);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    // The file or the repository is missing: only the second is the caller's error.
    await defaultBranch(git, r);
    return { ...source, fileExists: false, presets: new Map() };
  }
}

/** A preset by name: the tenant's own first, then the repository's file. */
export async function findPreset(git: Git, name: string, r: RepoName | null): Promise<{ entry: PresetEntry; source: PresetSource }> {
  const tenant = await tenantPresets(git);
  const own = tenant.presets.get(name);
  if (own) return { entry: own, source: tenant };
  const file = r ? await repoPresets(git, r) : null;
  if (file?.error) {
    throw new ToolError("preset_file_invalid", `${file.presetFile} is not a valid preset file (${file.error.kind}): ${file.error.message ?? file.error.issues?.join("; ") ?? ""}`, {
      hint: "Fix the file in the repository, or store the preset for the tenant with `npm run github -- set-preset`.",
    });
  }
  const entry = file?.presets.get(name);
  if (entry) return { entry, source: file! };
  throw new ToolError("preset_not_found", `No preset '${name}' in the tenant's presets${file ? ` or in ${file.presetFile}` : ""}.`, {
    hint: r ? "list_presets shows the presets there are." : "Pass repo to also look in that repository's .rethunk/git-mcp-presets.json; list_presets shows the presets there are.",
  });
}

export const presetNameField = z.string().min(1).max(100).optional().describe("A preset name: the tenant's stored presets first, then .rethunk/git-mcp-presets.json in repo.");
export const presetMergeField = z.boolean().default(false).describe("false (default): inline values win when non-empty, else the preset's; true: both, concatenated.");

const presetRow = z.object({
  name: z.string().describe("Preset name."),
  nestedRootsCount: z.number().int().optional().describe("How many repositories it lists."),
  parityPairsCount: z.number().int().optional().describe("How many parity pairs it lists."),
  workspaceRootHint: z.string().optional().describe("The preset's workspaceRootHint, if any."),
  nestedRoots: z.array(z.string()).optional().describe("The repositories (owner/name)."),
  parityPairs: z.array(pairSchema).optional().describe("The parity pairs."),
});

const rootRow = z.object({
  workspaceRoot: z.string().describe('"tenant" for the tenant\'s stored presets, or the repository (owner/name) whose file was read.'),
  gitTop: z.string().optional().describe("The repository the file was read from."),
  presetFile: z.string().describe(`Where the presets live: ${TENANT_PRESETS}, or owner/name:${PRESET_FILE}.`),
  fileExists: z.boolean().optional().describe("True when the preset file exists (omitted when it does not)."),
  presetSchemaVersion: z.union([z.number(), z.string()]).optional().describe("The file's schemaVersion, if any."),
  presets: z.array(presetRow).optional().describe("The presets, by name."),
  error: z.string().optional().describe("preset_file_invalid when the file cannot be used."),
  kind: z.string().optional().describe("invalid_json, schema or too_large, with error."),
  message: z.string().optional().describe("The parser's message (invalid_json)."),
  issues: z.array(z.string()).optional().describe("Schema problems (schema)."),
});

function toRow(s: PresetSource, gitTop?: string): z.input<typeof rootRow> {
  return {
    workspaceRoot: s.workspaceRoot,
    gitTop,
    presetFile: s.presetFile,
    fileExists: s.fileExists,
    presetSchemaVersion: s.presetSchemaVersion,
    presets: [...s.presets].map(([name, e]) => ({
      name: cleanText(name),
      nestedRootsCount: e.nestedRoots?.length ?? 0,
      parityPairsCount: e.parityPairs?.length ?? 0,
      workspaceRootHint: cleanText(e.workspaceRootHint),
      nestedRoots: e.nestedRoots?.map(cleanText),
      parityPairs: e.parityPairs?.map((p) => ({ left: cleanText(p.left), right: cleanText(p.right), label: p.label === undefined ? undefined : cleanText(p.label) })),
    })),
    ...(s.error ?? {}),
  };
}

export const listPresetsTool = gitReadTool({
  name: "list_presets",
  title: "List git presets",
  description: `List the git presets you can name in git_inventory and git_parity: the tenant's stored presets and, with repo, the ones in that repository's ${PRESET_FILE} (read through the GitHub contents API). A missing file is not an error (fileExists omitted); an unreadable one reports error preset_file_invalid with kind invalid_json or schema. Also readable as the resource ledger://repos/{owner}/{name}/presets.`,
  input: z.object({
    repo: repoField.optional(),
    ref: z.string().min(1).max(256).optional().describe("Branch, tag or SHA to read the preset file from (default: the default branch)."),
  }),
  output: z.object({ roots: z.array(rootRow).describe("One row per preset source: the tenant's store, then the repository's file.") }),
  run: async (git, input) => {
    assertSafeRef("ref", input.ref);
    if (input.ref !== undefined && !input.repo)
      throw new ToolError("invalid_input", "ref names where to read a repository's preset file, but no repo was given.", { hint: "Pass repo with ref, or drop ref." });
    const r = input.repo ? await resolveRepo(git.ctx, input.repo) : null;
    const roots = [toRow(await tenantPresets(git))];
    if (r) {
      try {
        roots.push(toRow(await repoPresets(git, r, input.ref), fullName(r)));
      } catch (err) {
        if (isNotFound(err)) throw repoNotFound(r);
        throw err;
      }
    }
    return { roots };
  },
  markdown: (result) => {
    const lines = ["# list_presets"];
    for (const root of result.roots) {
      lines.push("", `### ${root.presetFile}`);
      if (root.error) lines.push(`error: ${root.error} (${root.kind})${root.message ? ` ${root.message}` : ""}${root.issues ? `\n- ${root.issues.join("\n- ")}` : ""}`);
      else if (!root.fileExists) lines.push("(no preset file)");
      else if (!root.presets?.length) lines.push("(no presets)");
      else {
        lines.push("| preset | repositories | parity pairs |", "|---|---|---|");
        for (const p of root.presets) lines.push(`| ${cell(p.name)} | ${p.nestedRootsCount ?? 0} | ${p.parityPairsCount ?? 0} |`);
      }
    }
    return lines.join("\n");
  },
});
