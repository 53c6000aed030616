/**
 * The optional stages of review_diff beside its deterministic preflight: static analysis (what
 * GitHub already ran for the head commit) and the LLM passes. review_diff calls them through
 * these signatures only, so each lives in its own module and the pipeline never depends on how
 * a stage is done.
 */
import type { RepoName } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import type { ChangeType, Finding } from "./types";

/** A changed file as the stages see it: enough to plan what context to read around each hunk. */
export interface ChangedFileView {
  path: string;
  /** The path before the change ('' for an added file). */
  oldPath: string;
  status: "added" | "deleted" | "modified" | "renamed";
  binary: boolean;
  /** The new side's line ranges of each hunk (1-based, count may be 0 for a pure deletion). */
  hunks: { newStart: number; newLines: number }[];
  /** Added lines' text, in order. */
  added: string[];
  /** Each added line's number in the new file, in the same order (absent: numbers unknown). */
  addedLines?: number[];
}

export interface InvariantsRequest {
  files: ChangedFileView[];
  changedFiles: string[];
  /** Where the YAML is read from at headSha (contents API), unless `yaml` is given inline. */
  repo?: RepoName;
  headSha?: string;
  invariantsPath: string;
  /**
   * invariantsPath is the default (neither the call nor the repository's settings chose it): a
   * repository without a file there simply has no invariants, which is no warning.
   */
  invariantsPathIsDefault?: boolean;
  /** Inline invariants (YAML text); wins over the repository's file. */
  yaml?: string;
}

export interface InvariantsOutcome {
  findings: Finding[];
  /** Invariants evaluated. */
  executed: number;
  warnings: string[];
  /** The invariants as text for the LLM prompt ('' when none). */
  promptText: string;
}

export interface StaticRequest {
  /** The repository the diff belongs to; without it nothing can be looked up. */
  repo?: RepoName;
  /** The commit whose check runs and code-scanning alerts are read. */
  headSha?: string;
  changedFiles: string[];
  /** The seed's analyzer names; each is mapped to what GitHub reports (check runs, code scanning). */
  analyzers: ("tsc" | "semgrep")[];
  timeoutMs: number;
  maxFindingsPerAnalyzer: number;
}

export interface StaticOutcome {
  findings: Finding[];
  /** How many analyzers had results to report. */
  analyzersExecuted: number;
  /** One per analyzer that was not available, and why. */
  warnings: string[];
  /** Per analyzer: what was read (the seed's `results`). */
  results: unknown[];
}

export interface LlmRequest {
  diff: string;
  files: ChangedFileView[];
  repo?: RepoName;
  headSha?: string;
  riskScore: number;
  testsTouched: boolean;
  classification: ChangeType;
  hotspots: string[];
  /** The repository's invariants as prompt text ('' when none). */
  invariantsForPrompt: string;
  options: {
    llmForce: boolean;
    twoPass: boolean;
    riskThreshold: number;
    tokenBudget: number;
    maxContextFiles: number;
    customInstructions?: string;
    timeoutMs?: number;
  };
}

export interface LlmOutcome {
  findings: Finding[];
  passesExecuted: number;
  /** Why no pass ran (e.g. llm_not_configured, noise_gate_low_risk). */
  skippedReason?: string;
  model?: string;
  warnings: string[];
  timings: { contextFetch: number; secretsScrub: number; structural: number; detailed: number };
}

export interface ReviewStages {
  invariants?: (ctx: Ctx, req: InvariantsRequest) => Promise<InvariantsOutcome>;
  staticAnalysis?: (ctx: Ctx, req: StaticRequest) => Promise<StaticOutcome>;
  llm?: (ctx: Ctx, req: LlmRequest) => Promise<LlmOutcome>;
}
