/**
 * Static analysis (seed 004 §11) as a Worker can do it: a Worker cannot run tsc or semgrep, so it
 * reports what GitHub already ran for a commit. Sources: the commit's check runs and their
 * annotations, and the code-scanning alerts of the branch or pull request.
 *
 * Analyzer names:
 * - `tsc`: check runs whose name says TypeScript (tsc, typescript, typecheck, TS1234), and any
 *   annotation whose title or message says so (a `build` job's tsc problem-matcher output).
 * - `semgrep`: code-scanning alerts whose tool is Semgrep, and check runs named semgrep.
 * - `github:<tool>`: anything else GitHub reports, under its own name (a code-scanning tool such
 *   as CodeQL, or a check run's name). Listed in `results` so the caller can see it exists; its
 *   findings are included only when the caller names it or passes `all`. Nothing is ever mapped
 *   into `tsc` or `semgrep` that is not theirs.
 * Reading is bounded in pages and in time (timeout_ms covers the whole read, as the analyzers
 * share their sources); whatever stopped it short is a warning and `success: false`.
 */
import { z } from "zod";
import { GitHubClient, GitHubError } from "../../git/client";
import { apiBase, githubToolError, tenantTokenSource } from "../../git/credentials";
import { defaultBranch, explainMissing, fullName, repoParams } from "../../git/read-tool";
import { isSafeRef, type RepoName } from "../../git/tokens";
import { cleanText } from "../../git/untrusted";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { COMMIT_SHA_PREFIX } from "../../core/sha";
import type { ReviewStages, StaticOutcome } from "../pipeline/stages";
import { CATEGORIES, SEVERITY_RANK, type Category, type Finding, type Severity } from "../pipeline/types";

export const DEFAULT_ANALYZERS = ["tsc"] as const;
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_FINDINGS = 20;

/** 100 is GitHub's largest page for all three lists. */
const PER_PAGE = 100;
const MAX_CHECK_RUN_PAGES = 3;
/** Check runs whose annotations are read (each costs at least one request). */
const MAX_ANNOTATED_RUNS = 20;
const MAX_ANNOTATION_PAGES = 3;
const MAX_ALERT_PAGES = 3;
const MAX_TEXT = 300;

const TS_RUN = /\btsc\b|typescript|type-?check|\bTS\d{3,5}\b/i;
const TS_TEXT = /\btsc\b|typescript|\bTS\d{3,5}\b/i;
const SEMGREP = /semgrep/i;

/** An analyzer name as callers write it: tsc, semgrep, all, or github:<tool>. */
export const ANALYZER_NAME = /^(?:tsc|semgrep|all|github:\S.{0,99})$/i;

export interface StaticTarget {
  repo: RepoName;
  /** The commit whose check runs are read. */
  sha: string;
  /** The `ref` code scanning is asked for (a branch, refs/pull/N/merge); absent: the default branch. */
  scanningRef?: string;
  /** When set, only alerts last seen at this commit (or sha prefix) count: a bare sha has no code-scanning ref of its own. */
  matchCommit?: string;
  /** The ref as the caller named it, for warnings. */
  label: string;
}

export interface StaticReadOptions {
  analyzers: readonly string[];
  changedFiles: readonly string[];
  timeoutMs: number;
  maxFindingsPerAnalyzer: number;
  semgrepArgs?: readonly string[];
}

export const analyzerResultSchema = z.object({
  analyzer: z.string().describe("tsc, semgrep or github:<tool>."),
  included: z.boolean().describe("Its findings are in `findings` (it was asked for, by name or with all)."),
  available: z.boolean().describe("GitHub reported a run or result of it for this commit."),
  sources: z.array(z.string()).describe("What was read: check_run:<name> and code_scanning:<tool> entries."),
  commit_sha: z.string().describe("The commit whose results these are."),
  findings: z.number().int().describe("Findings of it in `findings`."),
  matched: z.number().int().describe("Results that matched changed_files, before max_findings_per_analyzer."),
  truncated: z.boolean().describe("More matched than max_findings_per_analyzer; the most severe were kept."),
  skipped_reason: z.string().optional().describe("Why nothing is reported: no_github_results, check_runs_unreadable, code_scanning_unavailable, incomplete."),
});
export type AnalyzerResult = z.infer<typeof analyzerResultSchema>;

export interface StaticReport {
  success: boolean;
  analyzers: string[];
  warnings: string[];
  results: AnalyzerResult[];
  findings: Finding[];
}

/** Thrown when the time budget is spent: reading stops and what was read is reported. */
class DeadlineReached extends Error {}

/** The time budget of one call, on the ctx's clock. */
export class Deadline {
  private readonly at: number;
  reached = false;
  constructor(
    private readonly ctx: Pick<Ctx, "clock">,
    timeoutMs: number,
  ) {
    this.at = ctx.clock.now().getTime() + timeoutMs;
  }
  remaining(): number {
    return this.at - this.ctx.clock.now().getTime();
  }
  /** Whether another request may start; false once the budget is spent. */
  more(): boolean {
    if (this.remaining() <= 0) this.reached = true;
    return !this.reached;
  }
  check(): void {
    if (!this.more()) throw new DeadlineReached("timeout");
  }
}

/**
 * The tenant's client, held to the deadline: no request starts after it, one in flight is
 * aborted at it, and the client's rate-limit or retry waits never run past it.
 */
function boundedClient(ctx: Ctx, deadline: Deadline): GitHubClient {
  return new GitHubClient({
    apiBase: apiBase(ctx.env),
    token: tenantTokenSource(ctx.env, ctx.tenantId),
    maxWaitMs: Math.min(10_000, Math.max(0, deadline.remaining())),
    fetch: async (input, init) => {
      deadline.check();
      const signal = AbortSignal.timeout(Math.max(1, deadline.remaining()));
      try {
        return await fetch(input, { ...init, signal });
      } catch (err) {
        if (signal.aborted) {
          deadline.reached = true;
          throw new DeadlineReached("timeout");
        }
        throw err;
      }
    },
    sleep: async (ms) => {
      if (deadline.reached || ms >= deadline.remaining()) {
        deadline.reached = true;
        throw new DeadlineReached("timeout");
      }
      await new Promise((r) => setTimeout(r, ms));
    },
  });
}

// --- What GitHub answers (only the fields read here) -------------------------------------------

interface CheckRun {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  html_url: string | null;
  output: { annotations_count: number };
}

interface Annotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: string | null;
  title: string | null;
  message: string | null;
  raw_details: string | null;
}

interface Alert {
  number: number;
  state: string | null;
  html_url: string;
  rule: { id?: string | null; name?: string; severity?: string | null; security_severity_level?: string | null; tags?: string[] | null; description?: string };
  tool: { name?: string };
  most_recent_instance: {
    state?: string;
    commit_sha?: string;
    message?: { text?: string };
    location?: { path?: string; start_line?: number; end_line?: number };
  };
}

// --- Mapping -----------------------------------------------------------------------------------

const firstLine = (text: string | null | undefined, max = MAX_TEXT) => {
  const line =
    cleanText(text)
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? "";
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
};

const otherName = (tool: string) => `github:${firstLine(tool, 100) || "unknown"}`;

/** The analyzer a check run's own results belong to. */
function runAnalyzer(run: CheckRun): string {
  if (SEMGREP.test(run.name)) return "semgrep";
  if (TS_RUN.test(run.name)) return "tsc";
  return otherName(run.name);
}

const ANNOTATION_SEVERITY: Record<string, Severity> = { failure: "HIGH", warning: "MEDIUM", notice: "LOW" };
const SECURITY_SEVERITY: Record<string, Severity> = { critical: "CRITICAL", high: "HIGH", medium: "MEDIUM", low: "LOW" };
const RULE_SEVERITY: Record<string, Severity> = { error: "HIGH", warning: "MEDIUM", note: "LOW", none: "INFO" };

/** A rule is a security rule when GitHub rates its security severity or it is tagged security. */
function alertCategory(alert: Alert): Category {
  const tags = (alert.rule.tags ?? []).map((t) => t.toLowerCase());
  if (alert.rule.security_severity_level || tags.includes("security")) return "security";
  return CATEGORIES.find((c) => tags.includes(c)) ?? "correctness";
}

function alertSeverity(alert: Alert): Severity {
  return SECURITY_SEVERITY[(alert.rule.security_severity_level ?? "").toLowerCase()] ?? RULE_SEVERITY[(alert.rule.severity ?? "").toLowerCase()] ?? "MEDIUM";
}

/** A finding before its id is numbered (ids count per analyzer, after filtering). */
type Draft = Omit<Finding, "id"> & { idStem: string };

const IMPACT: Record<string, string> = {
  tsc: "The TypeScript compiler reported this in CI: the build or type check fails, or a runtime error is likely where the types disagree.",
  semgrep: "Semgrep matched a rule here: a pattern that often means a bug or a security hole.",
};
const RECOMMENDATION: Record<string, string> = {
  tsc: "Fix the type error (or the types) so the type check passes; the check run has the full output.",
  semgrep: "Read the rule's explanation and fix the code, or suppress the rule here with a stated reason.",
};
const impactOf = (analyzer: string) => IMPACT[analyzer] ?? `${analyzer.slice("github:".length)} reported this on GitHub for this commit.`;
const recommendationOf = (analyzer: string) => RECOMMENDATION[analyzer] ?? "Look at the result on GitHub and fix it, or dismiss it there with a reason.";

const slug = (text: string) =>
  text
    .replace(/[^A-Za-z0-9._/-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80) || "result";

function annotationDraft(analyzer: string, run: CheckRun, a: Annotation): Draft {
  const text = `${a.title ?? ""}\n${a.message ?? ""}`;
  const code = /\bTS(\d{3,5})\b/.exec(text)?.[1];
  const message = firstLine((a.message ?? "").replace(/^\s*(?:error\s+)?TS\d{3,5}\s*:\s*/i, "")) || firstLine(a.title) || "(no message)";
  const level = (a.annotation_level ?? "").toLowerCase();
  const start = Math.max(1, a.start_line);
  return {
    idStem: analyzer === "tsc" ? `TSC${code ? `TS${code}` : ""}` : analyzer === "semgrep" ? `SEMGREP-${slug(firstLine(a.title, 80) || run.name)}` : `GH-${slug(run.name)}`,
    severity: ANNOTATION_SEVERITY[level] ?? "INFO",
    category: analyzer === "semgrep" ? "security" : "correctness",
    confidence: analyzer === "tsc" ? 0.95 : analyzer === "semgrep" ? 0.85 : 0.8,
    title: analyzer === "tsc" ? `TypeScript${code ? ` TS${code}` : ""}: ${message}` : `${firstLine(a.title, 80) || firstLine(run.name, 80)}: ${message}`,
    location: { file: cleanText(a.path), startLine: start, endLine: Math.max(start, a.end_line) },
    evidence: [
      `check run "${firstLine(run.name, 100)}" (${run.conclusion ?? run.status}), ${level || "unleveled"} annotation`,
      firstLine(a.message, 500),
      ...(a.raw_details ? [firstLine(a.raw_details, 500)] : []),
      ...(run.html_url ? [run.html_url] : []),
    ].filter((e) => e.length > 0),
    impact: impactOf(analyzer),
    recommendation: recommendationOf(analyzer),
  };
}

function alertDraft(analyzer: string, alert: Alert): Draft {
  const inst = alert.most_recent_instance;
  const ruleId = firstLine(alert.rule.id ?? alert.rule.name ?? "", 200) || "rule";
  const start = Math.max(1, inst.location?.start_line ?? 1);
  return {
    idStem: analyzer === "semgrep" ? `SEMGREP-${slug(ruleId)}` : `${slug(analyzer.slice("github:".length)).toUpperCase()}-${slug(ruleId)}`,
    severity: alertSeverity(alert),
    category: alertCategory(alert),
    confidence: analyzer === "semgrep" ? 0.85 : 0.8,
    title: firstLine(inst.message?.text) || firstLine(alert.rule.description) || ruleId,
    location: { file: cleanText(inst.location?.path) || "(unknown file)", startLine: start, endLine: Math.max(start, inst.location?.end_line ?? start) },
    evidence: [`${firstLine(alert.tool.name, 100)} rule ${ruleId} (code-scanning alert #${alert.number})`, ...(alert.rule.description ? [firstLine(alert.rule.description, 500)] : []), alert.html_url],
    impact: impactOf(analyzer),
    recommendation: recommendationOf(analyzer),
  };
}

// --- Reading -----------------------------------------------------------------------------------

/** What an analyzer gathered: whether it showed up at all, where from, and its results. */
interface Gathered {
  available: boolean;
  sources: Set<string>;
  drafts: Draft[];
  skipped?: string;
}

class Collector {
  readonly byAnalyzer = new Map<string, Gathered>();
  readonly warnings: string[] = [];
  incomplete = false;

  /** The canonical spelling of a name (tsc, semgrep, or the first github:<tool> spelling seen). */
  key(name: string): string {
    const lower = name.toLowerCase();
    if (lower === "tsc" || lower === "semgrep") return lower;
    for (const k of this.byAnalyzer.keys()) if (k.toLowerCase() === lower) return k;
    return name;
  }

  get(name: string): Gathered {
    const k = this.key(name);
    let g = this.byAnalyzer.get(k);
    if (!g) {
      g = { available: false, sources: new Set(), drafts: [] };
      this.byAnalyzer.set(k, g);
    }
    return g;
  }

  /** Marks an analyzer as reported by GitHub; GitHub's spelling of a tool's name wins over the caller's. */
  seen(name: string, source: string): Gathered {
    const k = this.key(name);
    const asked = this.byAnalyzer.get(k);
    if (asked && k !== name && !asked.available) {
      this.byAnalyzer.delete(k);
      this.byAnalyzer.set(name, asked);
    }
    const g = this.get(name);
    g.available = true;
    g.sources.add(source);
    return g;
  }
}

/** Stops on the deadline; a transient GitHub failure is a warning and an incomplete answer. */
function readFailure(c: Collector, what: string, err: unknown, deadline: Deadline): "timeout" | "unreadable" {
  if (err instanceof DeadlineReached || deadline.reached) return "timeout";
  if (err instanceof ToolError && err.code === "github_not_configured") throw err;
  const mapped = githubToolError(err);
  if (!(mapped instanceof ToolError)) throw err;
  c.warnings.push(`${what} could not be read: ${mapped.message}`);
  if (mapped.retryable) c.incomplete = true;
  return "unreadable";
}

async function readCheckRuns(gh: GitHubClient, c: Collector, t: StaticTarget, deadline: Deadline): Promise<CheckRun[]> {
  const runs: CheckRun[] = [];
  for (let page = 1; page <= MAX_CHECK_RUN_PAGES && deadline.more(); page++) {
    const res = await gh.request<{ total_count: number; check_runs: CheckRun[] }>("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
      ...repoParams(t.repo),
      ref: t.sha,
      filter: "latest",
      per_page: PER_PAGE,
      page,
    });
    runs.push(...res.data.check_runs);
    if (res.data.check_runs.length < PER_PAGE || runs.length >= res.data.total_count) return runs;
    if (page === MAX_CHECK_RUN_PAGES) {
      c.warnings.push(`check runs: read the first ${runs.length} of ${res.data.total_count} for ${t.label}; the rest were not read.`);
    }
  }
  return runs;
}

async function readAnnotations(gh: GitHubClient, c: Collector, t: StaticTarget, run: CheckRun, deadline: Deadline): Promise<Annotation[]> {
  const out: Annotation[] = [];
  const pages = Math.min(MAX_ANNOTATION_PAGES, Math.ceil(run.output.annotations_count / PER_PAGE));
  for (let page = 1; page <= pages && deadline.more(); page++) {
    const res = await gh.request<Annotation[]>("GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", {
      ...repoParams(t.repo),
      check_run_id: run.id,
      per_page: PER_PAGE,
      page,
    });
    out.push(...res.data);
    if (res.data.length < PER_PAGE) break;
  }
  if (run.output.annotations_count > out.length && out.length >= MAX_ANNOTATION_PAGES * PER_PAGE) {
    c.warnings.push(`check run "${firstLine(run.name, 100)}": read ${out.length} of its ${run.output.annotations_count} annotations.`);
  }
  return out;
}

async function gatherCheckRuns(gh: GitHubClient, c: Collector, t: StaticTarget, wants: (a: string) => boolean, deadline: Deadline): Promise<void> {
  let runs: CheckRun[];
  try {
    runs = await readCheckRuns(gh, c, t, deadline);
  } catch (err) {
    if (readFailure(c, `Check runs of ${t.label}`, err, deadline) === "timeout") throw err;
    for (const a of ["tsc", "semgrep"]) c.get(a).skipped ??= "check_runs_unreadable";
    return;
  }
  for (const run of runs) {
    const analyzer = runAnalyzer(run);
    c.seen(analyzer, `check_run:${firstLine(run.name, 100)}`);
    if (analyzer === "tsc" || analyzer === "semgrep") {
      if (run.status !== "completed") c.warnings.push(`${analyzer}: check run "${firstLine(run.name, 100)}" is ${run.status}; its results may be incomplete.`);
      else if (run.conclusion === "skipped" || run.conclusion === "cancelled") c.warnings.push(`${analyzer}: check run "${firstLine(run.name, 100)}" was ${run.conclusion}.`);
    }
  }
  let annotated = 0;
  for (const run of runs) {
    const analyzer = runAnalyzer(run);
    // tsc output can sit in any job's annotations (a build job's problem matcher), so a wanted tsc reads them all.
    if (run.output.annotations_count === 0 || !(wants(analyzer) || wants("tsc"))) continue;
    if (++annotated > MAX_ANNOTATED_RUNS) {
      if (annotated === MAX_ANNOTATED_RUNS + 1) c.warnings.push(`check runs: annotations were read for the first ${MAX_ANNOTATED_RUNS} check runs that have any; later runs' were not.`);
      continue;
    }
    let annotations: Annotation[];
    try {
      annotations = await readAnnotations(gh, c, t, run, deadline);
    } catch (err) {
      if (readFailure(c, `Annotations of check run "${firstLine(run.name, 100)}"`, err, deadline) === "timeout") throw err;
      continue;
    }
    for (const a of annotations) {
      // GitHub Actions' own notes about the job (exit codes, deprecations) sit at path .github, not in code.
      if (a.path === ".github") continue;
      const own = analyzer === "tsc" || analyzer === "semgrep" ? analyzer : TS_TEXT.test(`${a.title ?? ""}\n${a.message ?? ""}`) ? "tsc" : analyzer;
      c.seen(own, `check_run:${firstLine(run.name, 100)}`).drafts.push(annotationDraft(own, run, a));
    }
  }
}

async function gatherCodeScanning(gh: GitHubClient, c: Collector, t: StaticTarget, deadline: Deadline): Promise<void> {
  const alerts: Alert[] = [];
  try {
    for (let page = 1; page <= MAX_ALERT_PAGES && deadline.more(); page++) {
      const res = await gh.request<Alert[]>("GET /repos/{owner}/{repo}/code-scanning/alerts", {
        ...repoParams(t.repo),
        ...(t.scanningRef ? { ref: t.scanningRef } : {}),
        state: "open",
        per_page: PER_PAGE,
        page,
      });
      alerts.push(...res.data);
      if (res.data.length < PER_PAGE) break;
      if (page === MAX_ALERT_PAGES) c.warnings.push(`code scanning: read the first ${alerts.length} open alerts; later ones were not read.`);
    }
  } catch (err) {
    if (err instanceof DeadlineReached || deadline.reached) throw err;
    // No analysis, Advanced Security off, or no permission: code scanning is simply not there.
    if (err instanceof GitHubError && (err.status === 403 || err.status === 404)) {
      c.warnings.push(`code scanning is not available for ${fullName(t.repo)} (${err.message.replace(/^[^:]*:\s*/, "")}); semgrep and other code-scanning tools report nothing here.`);
      c.get("semgrep").skipped ??= "code_scanning_unavailable";
      return;
    }
    readFailure(c, "Code-scanning alerts", err, deadline);
    c.get("semgrep").skipped ??= "code_scanning_unavailable";
    return;
  }
  let otherCommit: string | undefined;
  for (const alert of alerts) {
    if (alert.state !== "open" || (alert.most_recent_instance.state ?? "open") !== "open") continue;
    const commit = alert.most_recent_instance.commit_sha ?? "";
    if (t.matchCommit && !commit.toLowerCase().startsWith(t.matchCommit.toLowerCase())) {
      otherCommit ??= commit;
      continue;
    }
    const tool = alert.tool.name ?? "";
    const analyzer = SEMGREP.test(tool) ? "semgrep" : otherName(tool);
    c.seen(analyzer, `code_scanning:${firstLine(tool, 100)}`).drafts.push(alertDraft(analyzer, alert));
  }
  if (otherCommit) {
    c.warnings.push(`code scanning: open alerts on the default branch were last seen at ${otherCommit.slice(0, 12)}, not ${t.label}; pass the branch or pull/<n> as ref to read that ref's alerts.`);
  }
}

/** The analyzers asked for, de-duplicated; `all` stands for every one GitHub reports. */
function selection(analyzers: readonly string[]): { all: boolean; names: string[] } {
  const names: string[] = [];
  let all = false;
  for (const a of analyzers) {
    if (a.toLowerCase() === "all") all = true;
    else if (!names.some((n) => n.toLowerCase() === a.toLowerCase())) names.push(/^(tsc|semgrep)$/i.test(a) ? a.toLowerCase() : a);
  }
  return { all, names };
}

const severityOrder = (a: Draft, b: Draft) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity];

/** Reads GitHub's results for the target and maps them to findings. */
export async function readStaticAnalysis(ctx: Ctx, target: StaticTarget, opts: StaticReadOptions, deadline = new Deadline(ctx, opts.timeoutMs)): Promise<StaticReport> {
  const { all, names } = selection(opts.analyzers);
  const wants = (a: string) => all || names.some((n) => n.toLowerCase() === a.toLowerCase());
  const c = new Collector();
  for (const n of names) c.get(n);
  if (opts.semgrepArgs?.length) c.warnings.push("semgrep_args are not applicable: this server reads the results GitHub already has and runs no analyzer itself.");
  const gh = boundedClient(ctx, deadline);
  try {
    await gatherCheckRuns(gh, c, target, wants, deadline);
    if (all || names.some((n) => n !== "tsc")) await gatherCodeScanning(gh, c, target, deadline);
  } catch (err) {
    if (!(err instanceof DeadlineReached || deadline.reached)) throw err;
  }
  if (deadline.reached) {
    c.incomplete = true;
    c.warnings.push(`timeout_ms (${opts.timeoutMs} ms) was reached before GitHub's results were all read; what was read is reported.`);
  }

  const changed = opts.changedFiles.length > 0 ? new Set(opts.changedFiles) : null;
  const findings: Finding[] = [];
  const results: AnalyzerResult[] = [];
  const order = [...names.map((n) => c.key(n)), ...[...c.byAnalyzer.keys()].filter((k) => !names.some((n) => c.key(n) === k))];
  for (const analyzer of order) {
    const g = c.byAnalyzer.get(analyzer)!;
    const included = wants(analyzer);
    const matched = g.drafts.filter((d) => !changed || changed.has(d.location.file)).sort(severityOrder);
    const kept = included ? matched.slice(0, opts.maxFindingsPerAnalyzer) : [];
    kept.forEach(({ idStem, ...d }, i) => findings.push({ id: `${idStem}-${i + 1}`, ...d }));
    const skipped = g.available ? undefined : c.incomplete ? "incomplete" : (g.skipped ?? "no_github_results");
    if (included && !g.available && skipped === "no_github_results") {
      c.warnings.push(
        analyzer === "tsc"
          ? `tsc: GitHub has no TypeScript check run or tsc annotation for ${target.label}; this server cannot run tsc itself, it reports what CI ran.`
          : analyzer === "semgrep"
            ? `semgrep: GitHub has no Semgrep check run or open Semgrep code-scanning alert for ${target.label}; this server cannot run semgrep itself.`
            : `${analyzer}: GitHub reports no check run or code-scanning result by that name for ${target.label}.`,
      );
    }
    results.push({
      analyzer,
      included,
      available: g.available,
      sources: [...g.sources],
      commit_sha: target.sha,
      findings: kept.length,
      matched: matched.length,
      truncated: included && matched.length > kept.length,
      ...(skipped ? { skipped_reason: skipped } : {}),
    });
  }
  return {
    success: !c.incomplete,
    analyzers: all ? results.map((r) => r.analyzer) : names.map((n) => c.key(n)),
    warnings: c.warnings,
    results,
    findings,
  };
}

// --- Targets -----------------------------------------------------------------------------------

const PULL = /^(?:#|pull\/|refs\/pull\/)(\d{1,9})(?:\/(?:head|merge))?$/;

/**
 * What `ref` names: a pull request (pull/<n>, #<n>, refs/pull/<n>/head) reads its head commit's
 * check runs and the alerts of refs/pull/<n>/merge, where code scanning files them; a branch or
 * tag reads its head and its own alerts; a sha reads its check runs and the default branch's
 * alerts last seen at it; no ref is the default branch.
 */
export async function resolveTarget(ctx: Ctx, repo: RepoName, ref: string | undefined, deadline: Deadline): Promise<StaticTarget> {
  const git = { ctx, gh: boundedClient(ctx, deadline) };
  try {
    const pull = ref === undefined ? null : PULL.exec(ref);
    if (pull) {
      const n = Number(pull[1]);
      const res = await git.gh
        .request<{ head: { sha: string } }>("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...repoParams(repo), pull_number: n })
        .catch((err: unknown) => explainMissing(git, repo, err, () => refNotFound(`pull request #${n}`)));
      return { repo, sha: res.data.head.sha, scanningRef: `refs/pull/${n}/merge`, label: `pull request #${n}` };
    }
    if (ref !== undefined && !isSafeRef(ref)) {
      throw new ToolError("unsafe_ref_token", `ref '${ref.slice(0, 100)}' contains characters outside the safe ref token set.`, {
        hint: "Pass a branch, tag, commit sha or pull/<n>.",
      });
    }
    const named = ref ?? (await defaultBranch(git, repo));
    const res = await git.gh
      .request<{ sha: string }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...repoParams(repo), ref: named, per_page: 1 })
      .catch((err: unknown) => explainMissing(git, repo, err, () => refNotFound(`ref '${named}'`)));
    const sha = res.data.sha;
    if (COMMIT_SHA_PREFIX.test(named) && sha.toLowerCase().startsWith(named.toLowerCase())) return { repo, sha, matchCommit: sha, label: sha.slice(0, 12) };
    return { repo, sha, scanningRef: named, label: ref === undefined ? `${named} (the default branch)` : named };
  } catch (err) {
    if (err instanceof DeadlineReached || deadline.reached) {
      throw new ToolError("timeout", "timeout_ms ran out before the ref could be resolved on GitHub.", {
        hint: "Retry with a larger timeout_ms; GitHub may be slow or rate-limiting.",
        retryable: true,
      });
    }
    throw githubToolError(err);
  }
}

const refNotFound = (what: string) =>
  new ToolError("ref_not_found", `${what} was not found in the repository.`, { hint: "Pass an existing branch, tag, commit sha or pull/<n>; omit ref for the default branch." });

// --- review_diff's stage -----------------------------------------------------------------------

/**
 * review_diff's enable_static_analysis: the same read for the diff's head commit. Without a
 * repository and head sha there is nothing to look up; GitHub trouble is a warning, never a failed review.
 */
export const staticStage: NonNullable<ReviewStages["staticAnalysis"]> = async (ctx, req): Promise<StaticOutcome> => {
  const none = (warning: string): StaticOutcome => ({ findings: [], analyzersExecuted: 0, warnings: [warning], results: [] });
  if (!req.repo || !req.headSha) return none("static analysis needs the repository and head_sha to read what GitHub ran; nothing was executed.");
  if (!COMMIT_SHA_PREFIX.test(req.headSha)) return none(`static analysis: head_sha '${req.headSha.slice(0, 60)}' is not a commit sha; nothing was executed.`);
  try {
    const report = await readStaticAnalysis(
      ctx,
      { repo: req.repo, sha: req.headSha, matchCommit: req.headSha, label: req.headSha.slice(0, 12) },
      { analyzers: req.analyzers, changedFiles: req.changedFiles, timeoutMs: req.timeoutMs, maxFindingsPerAnalyzer: req.maxFindingsPerAnalyzer },
    );
    return {
      findings: report.findings,
      analyzersExecuted: report.results.filter((r) => r.included && r.available).length,
      warnings: report.warnings,
      results: report.results,
    };
  } catch (err) {
    const mapped = githubToolError(err);
    if (mapped instanceof ToolError) return none(`static analysis was skipped: ${mapped.message}`);
    throw err;
  }
};
