/**
 * The expected-failures list and the verdict of a conformance run against it.
 *
 * Pure functions (no file or process access) so the rules are tested on their own in
 * baseline.test.ts. A scenario is judged on the suite's own terms: it passes when at least one
 * check succeeded and none failed or warned (the suite's `--expected-failures` counts a WARNING as
 * a failure too); a scenario whose checks were all skipped proved nothing and does not pass.
 */
import { parse } from "yaml";

type CheckStatus = "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";

export interface Check {
  id: string;
  name?: string;
  description?: string;
  status: CheckStatus;
  errorMessage?: string;
}

type Outcome = "pass" | "fail" | "skipped" | "error";

export interface ScenarioResult {
  scenario: string;
  revision: string;
  outcome: Outcome;
  passed: number;
  failed: number;
  warnings: number;
  /** The first failed check (or the runner's own error) in one line. */
  detail?: string;
  seconds: number;
}

/** revision → scenario → why it fails today. */
export type ExpectedFailures = Map<string, Map<string, string>>;

export function outcomeOf(checks: readonly Check[]): Pick<ScenarioResult, "outcome" | "passed" | "failed" | "warnings" | "detail"> {
  const passed = checks.filter((c) => c.status === "SUCCESS").length;
  const failed = checks.filter((c) => c.status === "FAILURE").length;
  const warnings = checks.filter((c) => c.status === "WARNING").length;
  const first = checks.find((c) => c.status === "FAILURE") ?? checks.find((c) => c.status === "WARNING") ?? checks.find((c) => c.status === "SKIPPED");
  const detail = first ? oneLine(`${first.id}: ${first.errorMessage ?? first.description ?? first.status}`) : undefined;
  const outcome: Outcome = failed + warnings > 0 ? "fail" : passed > 0 ? "pass" : "skipped";
  return { outcome, passed, failed, warnings, ...(outcome === "pass" ? {} : { detail }) };
}

export function oneLine(text: string, max = 240): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Reads the expected-failures YAML: a mapping of revision to a mapping of scenario to a reason.
 * Every entry must name a scenario the run plans (`planned`: revision → scenarios), so a typo or a
 * scenario dropped from the plan cannot sit in the list unnoticed, and every reason must be said.
 */
export function parseExpectedFailures(text: string, planned: ReadonlyMap<string, readonly string[]>): ExpectedFailures {
  const doc: unknown = parse(text) ?? {};
  if (typeof doc !== "object" || Array.isArray(doc)) throw new Error("expected failures: the file must map revisions to scenarios");
  const out: ExpectedFailures = new Map();
  for (const [revision, entries] of Object.entries(doc as Record<string, unknown>)) {
    const scenarios = planned.get(revision);
    if (!scenarios) throw new Error(`expected failures: revision ${revision} is not run (run: ${[...planned.keys()].join(", ")})`);
    if (entries === null) continue;
    if (typeof entries !== "object" || Array.isArray(entries)) throw new Error(`expected failures: ${revision} must map scenario names to reasons`);
    const reasons = new Map<string, string>();
    for (const [scenario, reason] of Object.entries(entries as Record<string, unknown>)) {
      if (!scenarios.includes(scenario)) throw new Error(`expected failures: ${scenario} is not run at ${revision}`);
      if (typeof reason !== "string" || reason.trim() === "") throw new Error(`expected failures: ${scenario} at ${revision} needs a one-line reason`);
      reasons.set(scenario, reason.trim());
    }
    out.set(revision, reasons);
  }
  return out;
}

export interface Verdict {
  ok: boolean;
  /** Failed and not listed. */
  unexpected: ScenarioResult[];
  /** Listed and now passing: the line must go. */
  stale: ScenarioResult[];
  /** Failed as listed. */
  expected: ScenarioResult[];
}

export function judge(results: readonly ScenarioResult[], expected: ExpectedFailures): Verdict {
  const verdict: Verdict = { ok: true, unexpected: [], stale: [], expected: [] };
  for (const r of results) {
    const listed = expected.get(r.revision)?.has(r.scenario) ?? false;
    if (r.outcome === "pass") {
      if (listed) verdict.stale.push(r);
    } else if (listed) verdict.expected.push(r);
    else verdict.unexpected.push(r);
  }
  verdict.ok = verdict.unexpected.length === 0 && verdict.stale.length === 0;
  return verdict;
}

/** The run as a Markdown table, with the reason from the list beside each expected failure. */
export function renderTable(results: readonly ScenarioResult[], expected: ExpectedFailures, verdict: Verdict): string {
  const mark = (r: ScenarioResult): string => {
    if (verdict.unexpected.includes(r)) return "UNEXPECTED";
    if (verdict.stale.includes(r)) return "STALE (passes; remove from the list)";
    return verdict.expected.includes(r) ? "expected" : "";
  };
  const cell = (s: string) => s.replace(/\|/g, "\\|");
  const lines = [
    "| revision | scenario | result | checks ok/failed/warned | verdict | listed reason | first failing check |",
    "|---|---|---|---|---|---|---|",
    ...results.map((r) => {
      const reason = expected.get(r.revision)?.get(r.scenario) ?? "";
      return `| ${r.revision} | ${r.scenario} | ${r.outcome} | ${r.passed}/${r.failed}/${r.warnings} | ${mark(r)} | ${cell(reason)} | ${cell(r.detail ?? "")} |`;
    }),
  ];
  const passing = results.filter((r) => r.outcome === "pass").length;
  lines.push("", `${passing} of ${results.length} scenario runs pass; ${verdict.expected.length} fail as listed, ${verdict.unexpected.length} unexpected, ${verdict.stale.length} stale.`);
  return lines.join("\n");
}
