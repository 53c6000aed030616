/**
 * review_diff's findings as a SARIF 2.1.0 log (OASIS), the format GitHub code scanning ingests:
 * one run, a rule per finding id, a result per finding with its level, location and a partial
 * fingerprint that stays put when lines move, and the review's run id in automationDetails.
 */
import { sha256Hex } from "../../db/ids";
import type { Finding, Severity } from "./types";

export const SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
export const SARIF_TOOL_NAME = "agent-ledger-review";
/** The partialFingerprints key; versioned so a change of what is hashed never matches old alerts. */
export const FINGERPRINT_KEY = "reviewFindingHash/v1";

type Level = "error" | "warning" | "note";

const LEVEL: Readonly<Record<Severity, Level>> = { CRITICAL: "error", HIGH: "error", MEDIUM: "warning", LOW: "note", INFO: "note" };

/** SARIF rule ids are matched textually by consumers: keep them to a conservative set of characters. */
export const sarifRuleId = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, "_");

export interface SarifInput {
  findings: Finding[];
  runId: string;
  toolVersion: string;
  /** The repository and commit reviewed, when known (versionControlProvenance). */
  repositoryUri?: string;
  revisionId?: string;
}

/** A repository path as a relative URI reference: each segment percent-encoded, slashes kept. */
const artifactUri = (path: string) => path.split("/").map(encodeURIComponent).join("/");

export async function toSarif(input: SarifInput): Promise<Record<string, unknown>> {
  const ruleIndex = new Map<string, number>();
  const rules: Record<string, unknown>[] = [];
  for (const f of input.findings) {
    const id = sarifRuleId(f.id);
    if (ruleIndex.has(id)) continue;
    ruleIndex.set(id, rules.length);
    rules.push({
      id,
      name: id,
      shortDescription: { text: f.title },
      fullDescription: { text: f.recommendation },
      defaultConfiguration: { level: LEVEL[f.severity] },
      properties: { category: f.category, severity: f.severity, confidence: f.confidence, tags: [f.category] },
    });
  }
  const results = await Promise.all(
    input.findings.map(async (f) => {
      const id = sarifRuleId(f.id);
      const startLine = Math.max(1, f.location.startLine);
      const endLine = Math.max(startLine, f.location.endLine ?? startLine);
      return {
        ruleId: id,
        ruleIndex: ruleIndex.get(id)!,
        level: LEVEL[f.severity],
        message: { text: `${f.title}\n\nImpact: ${f.impact}\n\nRecommendation: ${f.recommendation}` },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: artifactUri(f.location.file), uriBaseId: "%SRCROOT%" },
              region: { startLine, endLine },
            },
          },
        ],
        // Line numbers are left out of the hash: the same finding a few lines further down is the same alert.
        partialFingerprints: { [FINGERPRINT_KEY]: (await sha256Hex(`${f.id}\0${f.location.file}\0${f.title}`)).slice(0, 32) },
        properties: { id: f.id, category: f.category, severity: f.severity, confidence: f.confidence, evidence: f.evidence },
      };
    }),
  );
  const run: Record<string, unknown> = {
    tool: { driver: { name: SARIF_TOOL_NAME, version: input.toolVersion, rules } },
    automationDetails: { id: `review_diff/${input.runId}`, guid: input.runId },
    results,
  };
  if (input.repositoryUri) {
    run.versionControlProvenance = [{ repositoryUri: input.repositoryUri, ...(input.revisionId ? { revisionId: input.revisionId } : {}) }];
  }
  return { $schema: SARIF_SCHEMA_URI, version: "2.1.0", runs: [run] };
}
