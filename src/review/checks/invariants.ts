/**
 * Review invariants (seed 004; the reference's src/reviewer/checks/invariants): a YAML map of
 * category → rules, each naming path globs and a deterministic check over the lines a diff adds
 * to a matching file (deny: a regex must not match; require: it must; when_require: if one
 * matches, another must). check_invariants runs them alone; review_diff through invariantsStage.
 *
 * The rules are the repository's (or the caller's) text, so their regexes run on re2js (linear
 * time, whatever the pattern); a pattern needing what RE2 lacks (lookaround, backreferences) is
 * reported in the warning instead of run. Paths are repository paths read through GitHub: the
 * reference's workspace checks keep their messages, and "within workspace" means a symlink
 * whose target lies outside the repository (GitHub then answers with the link, not the file).
 */
import picomatch from "picomatch";
import { RE2JS } from "re2js";
import YAML, { YAMLError } from "yaml";
import { GitHubError } from "../../git/client";
import { decodeBase64 } from "../../git/contents";
import { githubFor, githubToolError } from "../../git/credentials";
import { defaultBranch, fullName, isNotFound, repoParams, type Git } from "../../git/read-tool";
import type { RepoName } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import { excerpt, isInternalText, ToolError } from "../../core/errors";
import { WorkBudget } from "../../core/work-budget";
import { addedText, type AddedText } from "../unified-diff/added-text";
import type { ChangedFileView, ReviewStages } from "../pipeline/stages";
import { CATEGORIES, SEVERITIES, type Category, type Finding, type Severity } from "../pipeline/types";

/** Bounds on what a caller or a repository can make one call do. */
export const MAX_INVARIANTS_BYTES = 64 * 1024;
export const MAX_INVARIANTS = 200;
export const MAX_REGEX_CHARS = 1000;
export const MAX_GLOBS = 50;
const MAX_GLOB_CHARS = 500;
const MAX_ID_CHARS = 100;
const MAX_RULE_CHARS = 2000;
/** Dropped entries named one by one; past this, counted (a 64 KB file of junk is not a page of warnings). */
const MAX_LOAD_WARNINGS = 50;
/**
 * Work all evaluations of one call may do, in characters of added text scanned, each weighed by
 * its regex's size (re2js slows with the program: a 1,800-instruction pattern reads about 6 MB/s
 * here) and at least PER_EVALUATION for any evaluation (starting a search), plus GLOB_WORK for
 * each glob tested against a path.
 */
export const SCAN_BUDGET = 20_000_000;
const PER_EVALUATION = 256;
/** One glob tested against one path. */
const GLOB_WORK = 16;
/** Program instructions a scanned character is charged for once (most patterns are smaller). */
const INSTRUCTIONS_PER_UNIT = 100;

export const ACTIONS = ["deny", "require", "when_require"] as const;

export interface InvariantRegex {
  pattern: string;
  flags?: string;
}

export interface Invariant {
  id: string;
  rule: string;
  paths: string[];
  severity: Severity;
  category: Category;
  /** As written: an unknown action is reported, not guessed. */
  action?: string;
  when?: { regex?: unknown };
  require?: { regex?: unknown };
  deny?: { regex?: unknown };
}

export interface InvariantsConfig {
  sections: { name: string; invariants: Invariant[] }[];
  /** About entries that were dropped while loading. */
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------
// Paths: the reference's workspace-relative checks (src/workspace/pathValidation.ts there).

/** A refusal of a path, with the reference's message. */
export class PathRefused extends Error {}

function posixNormalize(p: string): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else out.push(seg);
  }
  return out.join("/") || ".";
}

/** A repository-relative path, or PathRefused with the reference's message for `field`. */
export function normalizeRepoPath(value: string, field: string, opts: { rejectOptionLike?: boolean } = {}): string {
  const trimmed = value.trim();
  if (trimmed.length === 0) throw new PathRefused(`Invalid ${field}: path must not be empty.`);
  if (/[\0\r\n]/.test(trimmed)) throw new PathRefused(`Invalid ${field}: path contains control characters.`);
  if (/^[A-Za-z]:/.test(trimmed) || /^[\\/]{2}/.test(trimmed) || trimmed.startsWith("/")) {
    throw new PathRefused(`Invalid ${field}: absolute or drive-qualified paths are not allowed. Use paths relative to the workspace.`);
  }
  const normalized = posixNormalize(trimmed.replace(/\\/g, "/"));
  if (normalized === ".") throw new PathRefused(`Invalid ${field}: path must reference a file or nested workspace path.`);
  if (normalized.split("/").includes("..")) throw new PathRefused(`Invalid ${field}: path traversal is not allowed.`);
  if (opts.rejectOptionLike && normalized.startsWith("-")) throw new PathRefused(`Invalid ${field}: option-like paths are not allowed.`);
  return normalized;
}

// ---------------------------------------------------------------------------------------------
// Loading.

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The fields every invariant needs; one missing drops it. */
const REQUIRED = ["id", "rule", "paths", "severity", "category"] as const;

/**
 * One YAML entry → an invariant, or why it is dropped, naming it (by id, else by `where`: its
 * section and position), so a malformed rule is never silently left out.
 */
function normalizeInvariant(raw: unknown, where: string): Invariant | string {
  if (!isObject(raw)) return `Invariant ${where} dropped: expected a mapping with ${REQUIRED.join(", ")}`;
  const id = typeof raw.id === "string" && raw.id !== "" ? raw.id : undefined;
  const rule = typeof raw.rule === "string" && raw.rule !== "" ? raw.rule : undefined;
  const paths = Array.isArray(raw.paths) ? raw.paths.filter((p): p is string => typeof p === "string") : undefined;
  const severity = typeof raw.severity === "string" ? raw.severity : undefined;
  const category = typeof raw.category === "string" ? raw.category : undefined;
  const present = { id, rule, paths: paths && paths.length > 0 ? paths : undefined, severity, category };
  const missing = REQUIRED.filter((k) => present[k] === undefined);
  if (!id || !rule || !paths || paths.length === 0 || !severity || !category) {
    const name = id ? excerpt(id, 60) : where;
    return `Invariant ${name} dropped: missing or empty ${missing.join(", ")} (paths: a list of globs; the others strings)`;
  }
  // The finding shape has fixed severities and categories; the reference passes any string through.
  const sev = severity.toUpperCase() as Severity;
  const cat = category.toLowerCase() as Category;
  if (id.length > MAX_ID_CHARS) return `Invariant ${id.slice(0, 40)}… dropped: id longer than ${MAX_ID_CHARS} characters`;
  if (rule.length > MAX_RULE_CHARS) return `Invariant ${id} dropped: rule longer than ${MAX_RULE_CHARS} characters`;
  if (!SEVERITIES.includes(sev)) return `Invariant ${id} dropped: severity '${severity.slice(0, 40)}' is not one of ${SEVERITIES.join(", ")}`;
  if (!CATEGORIES.includes(cat)) return `Invariant ${id} dropped: category '${category.slice(0, 40)}' is not one of ${CATEGORIES.join(", ")}`;
  if (paths.length > MAX_GLOBS || paths.some((p) => p.length > MAX_GLOB_CHARS)) {
    return `Invariant ${id} dropped: at most ${MAX_GLOBS} path globs of at most ${MAX_GLOB_CHARS} characters`;
  }
  return {
    id,
    rule,
    paths,
    severity: sev,
    category: cat,
    ...(typeof raw.action === "string" ? { action: raw.action } : {}),
    ...(isObject(raw.when) ? { when: raw.when } : {}),
    ...(isObject(raw.require) ? { require: raw.require } : {}),
    ...(isObject(raw.deny) ? { deny: raw.deny } : {}),
  };
}

/** Alias expansions allowed in one document: bounds a "billion laughs". */
const MAX_YAML_ALIASES = 100;

/**
 * A YAML parse failure as the caller reads it: a syntax error's first line (it names the line and
 * column), but never the parser's own exhaustion (a stack overflow on deep nesting, which the
 * yaml package reports as RESOURCE_EXHAUSTION) nor anything else it did not mean to say.
 */
function yamlProblem(err: unknown): string {
  if (err instanceof YAMLError && err.code !== "RESOURCE_EXHAUSTION" && !isInternalText(err.message)) return excerpt(err.message.split("\n")[0]!, 300);
  // The package's own guard against alias bombs throws a plain ReferenceError: the document's fault, not the parser's.
  if (err instanceof ReferenceError && err.message.includes("alias")) return `aliases expand more than ${MAX_YAML_ALIASES} times; write the values out instead`;
  console.error("[invariants] YAML parser failure", err);
  if (err instanceof YAMLError) return "the document is nested too deeply to parse; invariants need only a few levels of nesting";
  return "the parser failed on this document; simplify it";
}

/** Parses invariants YAML; throws Error (the load failure the caller reports) when it cannot be used. */
export function parseInvariants(text: string): InvariantsConfig {
  if (new TextEncoder().encode(text).length > MAX_INVARIANTS_BYTES) throw new Error(`Invariants file is larger than ${MAX_INVARIANTS_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = YAML.parse(text, { maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    throw new Error(`Invalid invariants YAML: ${yamlProblem(err)}`, { cause: err });
  }
  if (!isObject(parsed)) throw new Error("Invalid invariants config: expected a mapping object");
  const sections: InvariantsConfig["sections"] = [];
  const warnings: string[] = [];
  let count = 0;
  for (const [name, value] of Object.entries(parsed)) {
    const section = excerpt(name, 60);
    if (!Array.isArray(value)) {
      warnings.push(`Section ${section} dropped: expected a list of invariants (${section}:\n  - id: …)`);
      continue;
    }
    const invariants: Invariant[] = [];
    value.forEach((entry, i) => {
      const inv = normalizeInvariant(entry, `${section}[${i}]`);
      if (typeof inv === "string") warnings.push(inv);
      else invariants.push(inv);
    });
    count += invariants.length;
    if (count > MAX_INVARIANTS) throw new Error(`Invalid invariants config: more than ${MAX_INVARIANTS} invariants`);
    if (invariants.length > 0) sections.push({ name, invariants });
  }
  if (warnings.length > MAX_LOAD_WARNINGS) warnings.splice(MAX_LOAD_WARNINGS, Infinity, `… and ${warnings.length - MAX_LOAD_WARNINGS} more entries dropped`);
  return { sections, warnings };
}

/** The invariants as the LLM prompt lists them (the reference's formatInvariants); '' when none. */
export function formatInvariants(config: InvariantsConfig): string {
  const lines: string[] = [];
  for (const { name, invariants } of config.sections) {
    lines.push(`${name}:`);
    for (const i of invariants) lines.push(`- [${i.id}] (${i.severity}/${i.category}) ${i.rule}`);
    lines.push("");
  }
  return lines.join("\n").trim();
}

// ---------------------------------------------------------------------------------------------
// Reading the file from a repository.

export type InvariantsSource =
  | { ok: true; text: string }
  /** missing: nothing at the path (not a directory, a symlink or a file too large). */
  | { ok: false; error: string; missing?: true };

interface ContentsAnswer {
  type?: string;
  content?: string;
  encoding?: string;
  size?: number;
}

/**
 * The invariants file of `repo` at `ref` (the default branch when absent). A missing or unusable
 * file is a load failure the caller reports; a missing repository, or GitHub refusing, is a
 * tool error (ToolError).
 */
export async function readInvariantsFile(ctx: Ctx, repo: RepoName, path: string, ref: string | undefined): Promise<InvariantsSource> {
  const git: Git = { ctx, gh: githubFor(ctx.env, ctx.tenantId) };
  const where = `${fullName(repo)}:${path}${ref ? `@${ref}` : ""}`;
  try {
    const res = await git.gh.request<ContentsAnswer | unknown[]>("GET /repos/{owner}/{repo}/contents/{path}", { ...repoParams(repo), path, ref });
    const file = res.data;
    if (Array.isArray(file)) return { ok: false, error: `Error: Invariants file not found: ${where} is a directory` };
    if (file.type === "symlink") return { ok: false, error: "Error: Invalid invariants_path: path must be within workspace." };
    if (file.type !== "file") return { ok: false, error: `Error: Invariants file not found: ${where}` };
    if ((file.size ?? 0) > MAX_INVARIANTS_BYTES || file.content === undefined || file.encoding === "none") {
      return { ok: false, error: `Error: Invariants file is larger than ${MAX_INVARIANTS_BYTES} bytes` };
    }
    return { ok: true, text: decodeBase64(file.content) };
  } catch (err) {
    if (!isNotFound(err)) throw githubToolError(err);
    // The file or the repository is missing: only the second is the caller's error.
    try {
      await defaultBranch(git, repo);
    } catch (inner) {
      throw githubToolError(inner);
    }
    return { ok: false, error: `Error: Invariants file not found: ${where}`, missing: true };
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

export interface InvariantRunResult {
  findings: Finding[];
  warnings: string[];
  checked: number;
}

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, g: 0, u: 0 };
/** Lookaround and backreferences: what JavaScript has and RE2 lacks. */
const NON_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

const render = (r: InvariantRegex) => `/${r.pattern}/${r.flags ?? ""}`;

function asRegex(block: { regex?: unknown } | undefined): InvariantRegex | null {
  const r = block?.regex;
  if (!isObject(r) || typeof r.pattern !== "string") return null;
  return { pattern: r.pattern, ...(typeof r.flags === "string" ? { flags: r.flags } : {}) };
}

function compile(def: InvariantRegex, cache: Map<string, RE2JS>): RE2JS {
  const key = `${def.flags ?? ""}/${def.pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const fail = (why: string) => new Error(`Invalid regex: ${render(def).slice(0, MAX_REGEX_CHARS + 20)} (${why})`);
  if (def.pattern.length > MAX_REGEX_CHARS) throw fail(`longer than ${MAX_REGEX_CHARS} characters`);
  let bits = 0;
  const flags = def.flags ?? "";
  for (const f of flags) {
    if (!(f in FLAG_BITS)) throw fail(`unsupported flag '${f}'; i, m, s, g and u are`);
    if (flags.indexOf(f) !== flags.lastIndexOf(f)) throw fail(`flag '${f}' repeated`);
    bits |= FLAG_BITS[f]!;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(def.pattern), bits);
  } catch (err) {
    const why = NON_RE2.test(def.pattern) ? "uses lookahead, lookbehind or a backreference, which RE2 (linear-time matching) does not support" : err instanceof Error ? err.message : String(err);
    throw fail(why);
  }
  cache.set(key, re);
  return re;
}

/** How much heavier than a small pattern this invariant's regexes are to run (1 for most). */
function programWeight(inv: Invariant, cache: Map<string, RE2JS>): number {
  let instructions = 0;
  for (const r of [inv.deny, inv.require, inv.when]) {
    const def = asRegex(r);
    if (!def) continue;
    try {
      instructions += compile(def, cache).matcher("").programSize();
    } catch {
      // evaluate() reports the pattern's error.
    }
  }
  return Math.max(1, Math.ceil(instructions / INSTRUCTIONS_PER_UNIT));
}

interface Failure {
  /** Where in the added text the failure shows: the match denied or the `when` that matched; 0 for a missing `require`. */
  at: number;
  evidence: string;
  impact: string;
  recommendation: string;
}

/** Where `re` first matches in `text` (only asked once a test has said it does). */
function firstMatch(re: RE2JS, text: string): number {
  const m = re.matcher(text);
  return m.find() ? m.start() : 0;
}

function evaluate(inv: Invariant, added: string, cache: Map<string, RE2JS>): Failure | null {
  if (inv.action === "deny") {
    const deny = asRegex(inv.deny);
    if (!deny) throw new Error("deny action requires deny.regex");
    const re = compile(deny, cache);
    if (!re.test(added)) return null;
    return {
      at: firstMatch(re, added),
      evidence: `deny.regex matched: ${render(deny)}`,
      impact: "A project invariant was violated by newly added code.",
      recommendation: "Refactor the change to comply with the invariant or update the policy intentionally.",
    };
  }
  if (inv.action === "require") {
    const req = asRegex(inv.require);
    if (!req) throw new Error("require action requires require.regex");
    if (compile(req, cache).test(added)) return null;
    return {
      at: 0,
      evidence: `require.regex not found: ${render(req)}`,
      impact: "A required pattern was not found in newly added code for affected files.",
      recommendation: "Add the required construct (or adjust the policy if it is no longer appropriate).",
    };
  }
  if (inv.action === "when_require") {
    const when = asRegex(inv.when);
    const req = asRegex(inv.require);
    if (!when || !req) throw new Error("when_require action requires when.regex and require.regex");
    const whenRe = compile(when, cache);
    const reqRe = compile(req, cache);
    if (!whenRe.test(added) || reqRe.test(added)) return null;
    return {
      at: firstMatch(whenRe, added),
      evidence: `when.regex matched but require.regex missing: when=${render(when)} require=${render(req)}`,
      impact: "Conditional invariant triggered; required safeguard appears missing.",
      recommendation: "Add the required safeguard or remove the triggering behavior.",
    };
  }
  return null;
}

/**
 * Runs every invariant over the added lines of each changed file its globs match (picomatch with
 * dot: true, as the reference's minimatch). `checked` counts (invariant, file) pairs evaluated. A
 * finding is at the added line where it shows: the denied match, the `when` that matched, or the
 * file's first added line for a missing `require`.
 */
export function runInvariants(files: readonly Pick<ChangedFileView, "path" | "oldPath" | "added" | "addedLines">[], changedFiles: readonly string[], config: InvariantsConfig): InvariantRunResult {
  const findings: Finding[] = [];
  const warnings = [...config.warnings];
  const cache = new Map<string, RE2JS>();
  // One lookup per path, joined once: a find and join per (invariant, file) was quadratic in files.
  const byPath = new Map<string, (typeof files)[number]>();
  for (const f of [...files].reverse()) {
    if (f.oldPath) byPath.set(f.oldPath, f);
  }
  for (const f of [...files].reverse()) byPath.set(f.path, f);
  const joined = new Map<string, AddedText>();
  const addedOf = (path: string) => {
    let text = joined.get(path);
    if (text === undefined) joined.set(path, (text = addedText(byPath.get(path) ?? { added: [] })));
    return text;
  };
  let checked = 0;
  const budget = new WorkBudget(SCAN_BUDGET);
  for (const inv of config.sections.flatMap((s) => s.invariants)) {
    if (!inv.action) {
      warnings.push(`Invariant ${inv.id} has no action; skipping deterministic evaluation`);
      continue;
    }
    if (!(ACTIONS as readonly string[]).includes(inv.action)) {
      warnings.push(`Invariant ${inv.id} has unknown action '${inv.action.slice(0, 40)}' (deny, require or when_require); skipping deterministic evaluation`);
      continue;
    }
    const matchers = inv.paths.map((p) => picomatch(p, { dot: true }));
    const weight = programWeight(inv, cache);
    const stop = () => {
      warnings.push(
        `Invariant evaluation stopped after ${checked} file checks: the work passed ${SCAN_BUDGET} (characters of added lines × pattern size, and glob matches); narrow the diff or the invariants' paths, or simplify their patterns`,
      );
      return { findings, warnings, checked };
    };
    const checkedBefore = checked;
    for (const file of changedFiles) {
      if (!budget.take(GLOB_WORK * matchers.length)) return stop();
      if (!matchers.some((m) => m(file))) continue;
      const added = addedOf(file);
      if (!budget.take(weight * Math.max(PER_EVALUATION, added.text.length))) return stop();
      checked++;
      try {
        const fail = evaluate(inv, added.text, cache);
        if (fail) {
          const line = added.lineAt(fail.at);
          findings.push({
            id: inv.id,
            severity: inv.severity,
            category: inv.category,
            confidence: 0.95,
            title: inv.rule.slice(0, 80),
            location: { file, startLine: line, endLine: line },
            evidence: [fail.evidence],
            impact: fail.impact,
            recommendation: fail.recommendation,
          });
        }
      } catch (err) {
        warnings.push(`Invariant ${inv.id} evaluation failed: ${String(err)}`);
      }
    }
    // A broken rule whose globs matched nothing this time would otherwise go unnoticed until one does.
    if (checked === checkedBefore) {
      try {
        evaluate(inv, "", cache);
      } catch (err) {
        warnings.push(`Invariant ${inv.id} cannot run (no changed file matched its paths yet): ${String(err)}`);
      }
    }
  }
  return { findings, warnings, checked };
}

// ---------------------------------------------------------------------------------------------
// The stage review_diff calls.

/**
 * Invariants for review_diff: inline YAML, or the repository's file at the head commit. As in
 * the reference, a file that cannot be read or parsed becomes a warning, not a failed review;
 * with neither YAML nor a repository there is nothing to run, and neither is there when no file
 * is at the default path (most repositories have none; reactive reviews would warn on every batch).
 */
export const invariantsStage: NonNullable<ReviewStages["invariants"]> = async (ctx, req) => {
  const none = (warnings: string[]) => ({ findings: [], executed: 0, warnings, promptText: "" });
  let text = req.yaml;
  if (text === undefined) {
    if (!req.repo) return none([]);
    let path: string;
    try {
      path = normalizeRepoPath(req.invariantsPath, "invariants_path");
    } catch (err) {
      return none([`Failed to load/run invariants: ${String(err)}`]);
    }
    try {
      const source = await readInvariantsFile(ctx, req.repo, path, req.headSha);
      if (!source.ok) return none(source.missing && req.invariantsPathIsDefault ? [] : [`Failed to load/run invariants: ${source.error}`]);
      text = source.text;
    } catch (err) {
      if (err instanceof ToolError || err instanceof GitHubError) return none([`Failed to load/run invariants: ${err.message}`]);
      throw err;
    }
  }
  let config: InvariantsConfig;
  try {
    config = parseInvariants(text);
  } catch (err) {
    return none([`Failed to load/run invariants: ${String(err)}`]);
  }
  const r = runInvariants(req.files, req.changedFiles, config);
  return { findings: r.findings, executed: r.checked, warnings: r.warnings, promptText: formatInvariants(config) };
};
