/**
 * validate_content (seed 004): the reference's tiered validation of a review output, a plan or
 * generated code (src/reactive/validation/pipeline.ts there). Secrets first (gitleaks' rules, as
 * errors), then tier 1 (deterministic: brackets, JSON for plans, emptiness) and tier 2
 * (heuristic, for generated code: TODO markers, console calls, hard-coded URLs; line length for
 * all). Same rule ids, severities and messages as the reference; finding ids are derived from the
 * rule and the position instead of the clock, so the same content gives the same answer.
 */
import { scanSecrets } from "./secrets";

export const CONTENT_TYPES = ["review_finding", "plan_output", "generated_code", "raw_text"] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export const TIERS = ["tier1_deterministic", "tier2_heuristic"] as const;
export type Tier = (typeof TIERS)[number];
export type ValidationSeverity = "error" | "warning" | "info";

export interface ValidationFinding {
  id: string;
  tier: Tier;
  severity: ValidationSeverity;
  category: string;
  ruleId: string;
  message: string;
  line?: number;
  suggestion?: string;
}

export interface ValidationInput {
  content: string;
  contentType: ContentType;
  filePath?: string;
}

/** The reference's maxFindings. */
export const MAX_FINDINGS = 100;
const MAX_LINE = 120;
/** The reference reports at most this many over-long lines. */
const MAX_LONG_LINES = 5;

const lineAt = (text: string, offset: number) => {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) n++;
  return n;
};

interface Rule {
  id: string;
  tier: Tier;
  run(input: ValidationInput, emit: (f: Omit<ValidationFinding, "tier" | "ruleId" | "id"> & { at: number }) => boolean): void;
}

/** Reports each match of `re` in generated code; stops when `emit` says the list is full. */
function eachMatch(input: ValidationInput, re: RegExp, report: (m: RegExpExecArray) => Omit<ValidationFinding, "tier" | "ruleId" | "id"> | null, emit: Parameters<Rule["run"]>[1]) {
  if (input.contentType !== "generated_code") return;
  for (const m of input.content.matchAll(re)) {
    const f = report(m);
    if (f && !emit({ ...f, at: m.index, line: lineAt(input.content, m.index) })) return;
  }
}

const RULES: Rule[] = [
  {
    id: "T1-001",
    tier: "tier1_deterministic",
    run({ content }, emit) {
      const pairs: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
      const stack: { char: string; index: number }[] = [];
      for (let i = 0; i < content.length; i++) {
        const ch = content[i]!;
        if (ch in pairs) stack.push({ char: ch, index: i });
        else if (ch === ")" || ch === "]" || ch === "}") {
          const last = stack.pop();
          if (!last || pairs[last.char] !== ch) {
            if (!emit({ severity: "error", category: "syntax", message: `Unbalanced bracket: '${ch}' at position ${i}`, line: lineAt(content, i), at: i })) return;
          }
        }
      }
      for (const open of stack) {
        if (!emit({ severity: "error", category: "syntax", message: `Unclosed bracket: '${open.char}' at position ${open.index}`, line: lineAt(content, open.index), at: open.index })) return;
      }
    },
  },
  {
    id: "T1-002",
    tier: "tier1_deterministic",
    run({ content, contentType }, emit) {
      if (contentType !== "plan_output") return;
      try {
        JSON.parse(content);
      } catch (err) {
        emit({ severity: "error", category: "schema", message: `Invalid JSON: ${err instanceof Error ? err.message : "parse error"}`, at: 0 });
      }
    },
  },
  {
    id: "T1-003",
    tier: "tier1_deterministic",
    run({ content }, emit) {
      if (content.trim().length === 0) emit({ severity: "warning", category: "content", message: "Content is empty or contains only whitespace", at: 0 });
    },
  },
  {
    id: "T2-001",
    tier: "tier2_heuristic",
    run(input, emit) {
      eachMatch(input, /\b(TODO|FIXME|XXX|HACK)\b.*$/gim, (m) => ({ severity: "warning", category: "completeness", message: `Found ${m[1]}: ${m[0].substring(0, 60)}...` }), emit);
    },
  },
  {
    id: "T2-002",
    tier: "tier2_heuristic",
    run(input, emit) {
      eachMatch(
        input,
        /\bconsole\.(log|debug|info|warn|error)\s*\(/g,
        (m) => ({
          severity: "info",
          category: "best_practices",
          message: `Console statement found: ${m[0]}`,
          suggestion: "Consider using a proper logging library in production",
        }),
        emit,
      );
    },
  },
  {
    id: "T2-003",
    tier: "tier2_heuristic",
    run(input, emit) {
      eachMatch(
        input,
        /https?:\/\/(?:localhost|127\.0\.0\.1|[a-z0-9-]+\.[a-z]{2,})[^\s"'`]*/gi,
        (m) =>
          m[0].includes("example.com") || m[0].includes("schema.org")
            ? null
            : { severity: "info", category: "maintainability", message: `Hardcoded URL found: ${m[0].substring(0, 40)}...`, suggestion: "Consider using environment variables for URLs" },
        emit,
      );
    },
  },
  {
    id: "T2-004",
    tier: "tier2_heuristic",
    run({ content }, emit) {
      let reported = 0;
      let at = 0;
      const lines = content.split("\n");
      for (let i = 0; i < lines.length && reported < MAX_LONG_LINES; i++) {
        const len = lines[i]!.length;
        if (len > MAX_LINE) {
          reported++;
          if (!emit({ severity: "info", category: "style", message: `Line ${i + 1} exceeds ${MAX_LINE} characters (${len})`, line: i + 1, at })) return;
        }
        at += len + 1;
      }
    },
  },
];

export interface ValidationResult {
  passed: boolean;
  findings: ValidationFinding[];
  secretsFound: boolean;
  tiersRun: Tier[];
}

export function validateContent(input: ValidationInput, opts: { scrubSecrets: boolean }): ValidationResult {
  const findings: ValidationFinding[] = [];
  let secretsFound = false;
  if (opts.scrubSecrets) {
    const scan = scanSecrets(input.content, { filePath: input.filePath });
    secretsFound = scan.secrets.length > 0;
    if (scan.note) {
      findings.push({
        id: "secret-scan-cut",
        tier: "tier1_deterministic",
        severity: "warning",
        category: "security",
        ruleId: "SECRET-001",
        message: scan.note,
        suggestion: "Validate the content in smaller parts so every secret rule runs.",
      });
    }
    for (const s of scan.secrets.slice(0, MAX_FINDINGS - findings.length)) {
      findings.push({
        id: `secret-${s.start}`,
        tier: "tier1_deterministic",
        severity: "error",
        category: "security",
        ruleId: "SECRET-001",
        message: `Secret detected: ${s.type} (${s.pattern})`,
        line: s.line,
      });
    }
  }
  for (const rule of RULES) {
    if (findings.length >= MAX_FINDINGS) break;
    rule.run(input, ({ at, ...f }) => {
      findings.push({ id: `${rule.id}-${at}`, tier: rule.tier, ruleId: rule.id, ...f });
      return findings.length < MAX_FINDINGS;
    });
  }
  return { passed: !findings.some((f) => f.severity === "error"), findings, secretsFound, tiersRun: [...TIERS] };
}
