/**
 * review_diff's secret check: the lines a diff adds, file by file, through the same detector as
 * scrub_secrets and validate_content (scanSecrets, gitleaks' rules), one budget for the whole
 * diff. A finding names the rule and the added line, and shows the secret masked as
 * scrub_secrets does, never in full.
 */
import { WorkBudget } from "../../core/work-budget";
import { addedText } from "../unified-diff/added-text";
import { maskSecret, scanSecrets, SECRET_SCAN_BUDGET } from "../scanners/secrets";
import type { ChangedFileView } from "./stages";
import type { Finding } from "./types";

/** The finding id's prefix; the rule, file and line follow, so each secret is its own finding (ids are unique after merging). */
export const SECRET_FINDING = "SEC001";
const MAX_ID_CHARS = 200;

export function diffSecretFindings(files: readonly ChangedFileView[], opts: { budget?: number } = {}): { findings: Finding[]; warnings: string[] } {
  const budget = new WorkBudget(opts.budget ?? SECRET_SCAN_BUDGET);
  const findings: Finding[] = [];
  const warnings: string[] = [];
  for (const file of files) {
    if (file.binary || file.added.length === 0) continue;
    const added = addedText(file);
    const scan = scanSecrets(added.text, { filePath: file.path, budget });
    if (scan.note) warnings.push(`${file.path}: ${scan.note}`);
    for (const s of scan.secrets) {
      const line = added.lineAt(s.start);
      findings.push({
        id: `${SECRET_FINDING}:${s.pattern}:${file.path}:${line}`.slice(0, MAX_ID_CHARS),
        severity: s.confidence === "low" ? "HIGH" : "CRITICAL",
        category: "security",
        confidence: s.confidence === "high" ? 0.95 : s.confidence === "medium" ? 0.8 : 0.6,
        title: `Secret added: ${s.type} (${s.pattern})`,
        location: { file: file.path, startLine: line, endLine: line },
        evidence: [`${s.pattern} matched ${maskSecret(s.value)} on an added line`],
        impact: "A credential committed to the repository is readable by everyone with access to it and stays in its history.",
        recommendation: "Remove the secret from the change, revoke it at its provider, and read it from the environment or a secret store.",
      });
    }
  }
  return { findings, warnings };
}
