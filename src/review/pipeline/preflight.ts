/**
 * review_diff's deterministic preflight (the reference's checks/preflight.ts and the
 * deterministic findings of pipeline/synthesis.ts): hotspots, config and test paths, public API
 * changes, the risk score and PRE001–PRE005. The hotspot and config lists are globs: a
 * repository's own from its review settings, else the defaults of src/review/settings/model.ts (the
 * reference's regular expressions written as globs that match the same paths).
 */
import picomatch from "picomatch";
import { invalidInput } from "../../core/errors";
import { isTestPath } from "./classify";
import type { ParsedDiff } from "../unified-diff/parse";
import { DEFAULT_CONFIG_PATHS, DEFAULT_HOTSPOTS, SETTINGS_GLOB_OPTIONS, type HotspotRule, type ReviewSettings } from "../settings/model";
import type { ChangeType, Finding } from "./types";

const EXPORT_LINE = /^\s*(export\s+|module\.exports\b|exports\.)/i;

/** The reference's count of deterministic checks (tests, public API, config, binary, hotspots). */
export const DETERMINISTIC_CHECKS = 5;

/** Which paths are hotspots (and of which ids) and which are configuration, for one review. */
export interface PathRules {
  hotspotsOf(path: string): string[];
  isConfig(path: string): boolean;
}

type Matcher = (path: string) => boolean;

/**
 * A glob of a repository's review settings, matched as written (picomatch, case-insensitive, dot
 * files included): `Dockerfile` is the root's only, and with a leading globstar it is any folder's;
 * the default lists mean the same, so a default list copied into the settings keeps its meaning.
 */
function repoGlob(glob: string, where: string): Matcher {
  try {
    return picomatch(glob, SETTINGS_GLOB_OPTIONS);
  } catch {
    throw invalidInput(`The repository's review settings hold an invalid glob in ${where}: '${glob.slice(0, 100)}'.`, "Fix the glob in the repository's review settings.");
  }
}

/**
 * The default lists (test/review/settings.test.ts holds them to the reference's regexes: its
 * `package.json`, `tsconfig*.json` and `dockerfile` are root paths only, and where it matches in
 * any folder the default globs begin with a globstar).
 */
const defaultGlob = (glob: string): Matcher => picomatch(glob, SETTINGS_GLOB_OPTIONS);

const anyOf =
  (tests: Matcher[]): Matcher =>
  (p) =>
    tests.some((t) => t(p));

const hotspotMatchers = (rules: readonly HotspotRule[], glob: (g: string, where: string) => Matcher) => rules.map((h) => ({ id: h.id, test: anyOf(h.paths.map((g) => glob(g, `hotspot ${h.id}`))) }));

const DEFAULT_RULES = { hotspots: hotspotMatchers(DEFAULT_HOTSPOTS, defaultGlob), config: anyOf(DEFAULT_CONFIG_PATHS.map(defaultGlob)) };

export function pathRules(settings: Pick<ReviewSettings, "hotspots" | "configPaths"> | null): PathRules {
  const hotspots = settings?.hotspots ? hotspotMatchers(settings.hotspots, repoGlob) : DEFAULT_RULES.hotspots;
  const config = settings?.configPaths ? anyOf(settings.configPaths.map((g) => repoGlob(g, "config paths"))) : DEFAULT_RULES.config;
  return {
    hotspotsOf: (p) => hotspots.filter((h) => h.test(p)).map((h) => h.id),
    isConfig: config,
  };
}

export interface Preflight {
  changedFiles: string[];
  hotspots: string[];
  publicApiChanged: boolean;
  configChanged: boolean;
  testsTouched: boolean;
  binaryChanged: boolean;
  riskScore: number;
  rawRiskScore: number;
}

export interface RiskFactors {
  filesChanged: number;
  hotspots: number;
  publicApiChanged: boolean;
  configChanged: boolean;
  testsTouched: boolean;
}

/** 1 + (files > 10: 1) + 0.5 per hotspot + (public API: 1.5) + (config: 0.5) + (no tests: 1). */
export function rawRisk(f: RiskFactors): number {
  return 1 + (f.filesChanged > 10 ? 1 : 0) + f.hotspots * 0.5 + (f.publicApiChanged ? 1.5 : 0) + (f.configChanged ? 0.5 : 0) + (f.testsTouched ? 0 : 1);
}

/** The raw score rounded up and held to 1–5. */
export const riskScore = (raw: number) => Math.min(5, Math.max(1, Math.ceil(raw)));

/** `changedFiles`: the caller's list when it has entries, else the new path of each parsed file. */
export function runPreflight(parsed: ParsedDiff, provided: string[] | undefined, rules: PathRules): Preflight {
  const changedFiles = provided && provided.length > 0 ? provided : parsed.files.map((f) => f.newPath);
  const hotspots = [...new Set(changedFiles.flatMap((p) => rules.hotspotsOf(p)))].sort();
  const configChanged = changedFiles.some((p) => rules.isConfig(p));
  const testsTouched = changedFiles.some(isTestPath);
  const publicApiChanged =
    changedFiles.some((p) => /^src\/index\.ts$/i.test(p) || /^src\/mcp\/tools\//i.test(p)) ||
    parsed.files.some((f) => f.hunks.some((h) => h.lines.some((l) => l.type !== "context" && EXPORT_LINE.test(l.content))));
  const raw = rawRisk({ filesChanged: changedFiles.length, hotspots: hotspots.length, publicApiChanged, configChanged, testsTouched });
  return {
    changedFiles,
    hotspots,
    publicApiChanged,
    configChanged,
    testsTouched,
    binaryChanged: parsed.files.some((f) => f.isBinary),
    riskScore: riskScore(raw),
    rawRiskScore: raw,
  };
}

/** PRE001–PRE005, each located at the first changed file, lines 1–1. */
export function deterministicFindings(p: Preflight, classification: ChangeType): Finding[] {
  const location = { file: p.changedFiles[0] ?? "(multiple files)", startLine: 1, endLine: 1 };
  const out: Finding[] = [];
  const add = (f: Omit<Finding, "location">) => out.push({ ...f, location });
  if (!p.testsTouched && classification !== "docs" && classification !== "infra") {
    const shown = p.changedFiles.slice(0, 10).join(", ") + (p.changedFiles.length > 10 ? ", ..." : "");
    add({
      id: "PRE001",
      severity: "MEDIUM",
      category: "reliability",
      confidence: 0.95,
      title: "No tests appear to be touched by this change",
      evidence: [`changed_files: ${shown}`],
      impact: "Regressions are more likely when behaviour changes without tests changing or being added.",
      recommendation: "Add or update tests that cover the changed behaviour, or say why none are needed.",
    });
  }
  if (p.publicApiChanged) {
    add({
      id: "PRE002",
      severity: "HIGH",
      category: "architecture",
      confidence: 0.9,
      title: "Possible public API surface change detected",
      evidence: ["Export lines changed, or an entry point or tool registration path changed."],
      impact: "Callers downstream may break if the change is not backward compatible.",
      recommendation: "Check compatibility, update the documentation, and version the release accordingly.",
    });
  }
  if (p.configChanged) {
    add({
      id: "PRE003",
      severity: "MEDIUM",
      category: "infra",
      confidence: 0.9,
      title: "Configuration or CI-related files changed",
      evidence: [`hotspots: ${p.hotspots.join(", ") || "(none)"}`],
      impact: "How the project builds, releases or runs can change in ways a code review does not show.",
      recommendation: "Run the build and tests locally and confirm CI still does what it should.",
    });
  }
  if (p.binaryChanged) {
    add({
      id: "PRE004",
      severity: "LOW",
      category: "maintainability",
      confidence: 0.85,
      title: "Binary file change detected in diff",
      evidence: ["The diff changes binary files, whose content cannot be reviewed from it."],
      impact: "Reviewers cannot judge a binary change for safety or correctness.",
      recommendation: "Say where the file comes from and why it changed (e.g. a generated asset), or keep generated artifacts elsewhere.",
    });
  }
  if (p.hotspots.length > 0) {
    add({
      id: "PRE005",
      severity: "INFO",
      category: "maintainability",
      confidence: 0.9,
      title: "Hotspot paths detected",
      evidence: [`hotspots: ${p.hotspots.join(", ")}`],
      impact: "Changes in these areas usually reach further than they look.",
      recommendation: "Check the edge cases twice and make sure tests cover the critical paths.",
    });
  }
  return out;
}
