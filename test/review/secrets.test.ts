/** scrub_secrets, validate_content and scrubForPrompt: gitleaks' rules over real text. */
import { describe, expect, it } from "vitest";
import lockfile from "../../package-lock.json?raw";
import { GITLEAKS, GITLEAKS_SOURCE } from "../../src/review/scanners/gitleaks-rules";
import { findSecrets, maskSecret, scanSecrets, scrubForPrompt, scrubSecrets, shannonEntropy } from "../../src/review/scanners/secrets";
import { MAX_CONTENT } from "../../src/review/secrets/model";
import samples from "../fixtures/review/secrets/gitleaks-samples.json";
import apiGo from "../fixtures/review/secrets/gitleaks-api.go.txt?raw";
import envProd from "../fixtures/review/secrets/gitleaks-env.prod.txt?raw";
import gitLog from "../fixtures/review/secrets/hono-git-log.txt?raw";
import bayerPng from "../fixtures/review/secrets/three-bayer-png.txt?raw";
import uuids from "../fixtures/review/secrets/uuids.txt?raw";
import releaseDiff from "../fixtures/review/invariants/hono-release-oidc.diff?raw";
import { fails, newWorld, ok } from "../support/helpers";

const world = () => newWorld("secrets", { start: "2026-06-01T12:00:00.000Z" });

describe("scrub_secrets", () => {
  describe("the gitleaks rule set", () => {
    it("is the pinned release, every rule compiled by re2js", () => {
      expect(GITLEAKS_SOURCE).toBe("gitleaks v8.30.0 (6eaad039603a4de39fddd1cf5f727391efe9974e)");
      expect(GITLEAKS.rules.length).toBeGreaterThan(200);
      // findSecrets compiles a rule when its keyword appears: give every keyword once.
      const everyKeyword = GITLEAKS.rules.flatMap((r) => r.keywords).join(" ");
      expect(() => findSecrets(everyKeyword)).not.toThrow();
    });

    it("finds gitleaks' own true positives, each by the rule gitleaks names", () => {
      expect(samples.tps.length).toBeGreaterThan(15);
      for (const tp of samples.tps) {
        expect(
          findSecrets(tp.text).map((s) => s.pattern),
          tp.from,
        ).toContain(tp.rule);
      }
    });

    it("finds nothing in gitleaks' own false positives", () => {
      expect(samples.fps.length).toBeGreaterThan(80);
      for (const fp of samples.fps) expect(findSecrets(fp.text), `${fp.from}: ${fp.text}`).toEqual([]);
    });

    it("finds the secrets in gitleaks' test files, on the right lines", () => {
      expect(findSecrets(apiGo)).toMatchObject([{ pattern: "aws-access-token", type: "aws_key", confidence: "high", line: 20, value: "AKIALALEMEL33243OLIA" }]);
      expect(findSecrets(envProd)).toMatchObject([{ pattern: "generic-api-key", type: "general_secret", confidence: "low", line: 4, value: "8ae31cacf141669ddfb5da" }]);
    });

    it("leaves ordinary high-entropy text alone: lockfile integrity hashes, commit SHAs, pinned actions, UUIDs, base64 images", () => {
      expect(lockfile).toMatch(/"integrity": "sha512-/);
      expect(findSecrets(lockfile)).toEqual([]);
      expect(gitLog.split("\n")[0]).toMatch(/^[0-9a-f]{40} /);
      expect(findSecrets(gitLog)).toEqual([]);
      expect(releaseDiff).toMatch(/@[0-9a-f]{40} # v6/);
      expect(findSecrets(releaseDiff)).toEqual([]);
      expect(uuids.split("\n").length).toBeGreaterThan(20);
      expect(findSecrets(uuids)).toEqual([]);
      expect(bayerPng.length).toBeGreaterThan(2000);
      expect(findSecrets(bayerPng)).toEqual([]);
      expect(findSecrets(`<img src="${bayerPng.trim()}">\nconst apiKey = process.env.API_KEY;`)).toEqual([]);
    });

    it("honours gitleaks:allow, path rules and path allowlists", () => {
      const key = 'awsToken := "AKIALALEMEL33243OLIA"';
      expect(findSecrets(`${key} // gitleaks:allow`)).toEqual([]);
      // The global allowlist exempts lockfiles by path; the Terraform password rule needs a .tf path.
      expect(findSecrets(key, { filePath: "package-lock.json" })).toEqual([]);
      // gitleaks' own samples (hashicorp.go): the rule needs a .tf/.hcl path.
      const tf = 'administrator_login_password = "thisIsDog11"';
      expect(findSecrets(tf, { filePath: "infra/file.tf" })).toMatchObject([{ pattern: "hashicorp-tf-password", type: "password", value: '"thisIsDog11"' }]);
      expect(findSecrets('password       = "rootpasswd"', { filePath: "unrelated.js" })).toEqual([]);
      expect(findSecrets("administrator_login_password = var.db_password", { filePath: "file.tf" })).toEqual([]);
    });

    it("runs in linear time on adversarial text", () => {
      // Long runs that keep a backtracking engine trying: keyword-laden, assignment-shaped, no terminator.
      const nasty = `${"api_key=".repeat(20_000)}${"a".repeat(200_000)}${"eyJ.".repeat(30_000)}`;
      const started = Date.now();
      findSecrets(nasty);
      expect(Date.now() - started).toBeLessThan(15_000);
    });
  });

  describe("masking", () => {
    it("keeps show_start and show_end characters and at most 20 mask characters", () => {
      expect(maskSecret("AKIALALEMEL33243OLIA")).toBe("AKIA****************");
      expect(maskSecret("AKIALALEMEL33243OLIA", { showStart: 2, showEnd: 3 })).toBe("AK***************LIA");
      expect(maskSecret("x".repeat(100), { showStart: 0, showEnd: 0 })).toBe("*".repeat(20));
      expect(maskSecret("short", { showStart: 4, showEnd: 4 })).toBe("*****");
      expect(shannonEntropy("aaaa")).toBe(0);
      expect(shannonEntropy("ab")).toBe(1);
    });

    it("scrubForPrompt masks every secret and names the rules that found them", () => {
      const text = `${apiGo}\n${envProd}`;
      const r = scrubForPrompt(text);
      expect(r.found).toEqual(["aws-access-token", "generic-api-key"]);
      expect(r.text).not.toContain("AKIALALEMEL33243OLIA");
      expect(r.text).not.toContain("8ae31cacf141669ddfb5da");
      expect(r.text).toContain('awsToken := "AKIA****************"');
      expect(r.text).toContain("DB_PASSWORD=8ae3******************");
      expect(scrubForPrompt(gitLog)).toEqual({ text: gitLog, found: [] });
    });

    it("replaces the secret only, leaving the surrounding match as it was", () => {
      const slack = samples.tps.find((t) => t.rule === "slack-bot-token")!.text;
      const r = scrubSecrets(slack, { showStart: 5, showEnd: 0 });
      expect(r.text).toBe('"bot_token1": "xoxb-********************"');
      expect(r.secrets).toEqual([{ type: "slack_token", pattern: "slack-bot-token", confidence: "high", start: 15, end: 71, line: 1, masked: "xoxb-********************" }]);
    });
  });

  /** `n` distinct AWS access-key-shaped strings, random enough to pass the rule's entropy bound. */
  function awsKeys(n: number): string[] {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let seed = 0x2545f491;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % alphabet.length;
    const keys: string[] = [];
    while (keys.length < n) {
      const key = `AKIA${Array.from({ length: 16 }, () => alphabet[next()]).join("")}`;
      // The rule's entropy bound (3 bits) drops a few random draws; those are not secrets to it.
      if (shannonEntropy(key) > 3.2) keys.push(key);
    }
    return keys;
  }

  describe("secret scanning of hostile content", () => {
    const timed = <T>(label: string, f: () => T): { r: T; ms: number } => {
      const started = performance.now();
      const r = f();
      const ms = performance.now() - started;
      console.log(`secrets hostile ${label}: ${Math.round(ms)} ms`);
      return { r, ms };
    };

    // 6.3 s before: a line-number rescan per finding and a whole-line copy per match.
    it("40,000 key-shaped strings (840 KB), one per line, are all masked in well under the old 6 s", () => {
      const keys = awsKeys(40_000);
      const text = keys.join("\n");
      expect(text.length).toBeGreaterThan(830_000);
      scrubSecrets("warm up AKIA"); // rules compile once per isolate
      const { r, ms } = timed("40k keys, one per line", () => scrubSecrets(text));
      expect(ms).toBeLessThan(2500);
      expect(r.truncated).toBe(false);
      expect(r.secrets).toHaveLength(40_000);
      expect(r.secrets[39_999]).toMatchObject({ pattern: "aws-access-token", line: 40_000, masked: `AKIA${"*".repeat(16)}` });
      expect(r.text).toBe(keys.map((k) => `${k.slice(0, 4)}${"*".repeat(16)}`).join("\n"));
    });

    it("20,000 assignments on one line, each found by a specific rule and the generic one, scale linearly", () => {
      const keys = awsKeys(20_000);
      const text = keys.map((k) => `aws_key="${k}"`).join(" ");
      const { r, ms } = timed(`20k assignments on one ${text.length}-char line`, () => findSecrets(text));
      expect(ms).toBeLessThan(2500);
      // The generic finding on each gives way to the specific one, as in gitleaks.
      expect(r.map((d) => d.pattern)).toEqual(keys.map(() => "aws-access-token"));
      expect(r.every((d) => d.line === 1)).toBe(true);
    });

    it("a text waking every rule at a megabyte is cut by the budget, and says which rules it left out", () => {
      const keywords = [...new Set(GITLEAKS.rules.flatMap((r) => r.keywords))].join(" ");
      const filler = "const token = getKey(api, secret); password.length > 0 && run(x);\n";
      const text = `${keywords}\n${filler.repeat(Math.floor(950_000 / filler.length))}aws_key = "${awsKeys(1)[0]}"\n`;
      const { r, ms } = timed("every keyword at 1 MB", () => scanSecrets(text));
      expect(ms).toBeLessThan(2500);
      expect(r.truncated).toBe(true);
      expect(r.note).toMatch(/^secret scan cut: .* rule\(s\) not run \(.*generic-api-key|rule\(s\) not run/);
      // The specific rules run first: the key at the end is still found.
      expect(r.secrets.map((d) => d.pattern)).toContain("aws-access-token");
      // A small text is scanned whole.
      expect(scanSecrets(`${keywords}\naws_key = "${awsKeys(1)[0]}"`)).toMatchObject({ truncated: false, note: null });
    });
  });

  describe("over the registry", () => {
    it("answers the reference's shape with masked values and the scrubbed content", async () => {
      const { ctx } = await world();
      const content = `${envProd}\n${samples.tps.find((t) => t.rule === "private-key")!.text}\n${apiGo}`;
      const r = await ok(ctx, "scrub_secrets", { content, show_start: 4, show_end: 2 });
      expect(r).toMatchObject({ success: true, secrets_found: true, secrets_count: 3 });
      expect(r.detected_types.map((d: { pattern: string }) => d.pattern)).toEqual(["generic-api-key", "private-key", "aws-access-token"]);
      expect(r.detected_types[2]).toEqual({ type: "aws_key", pattern: "aws-access-token", confidence: "high", masked: "AKIA**************IA", line: 30 });
      expect(r.scrubbed_content).not.toMatch(/MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8|8ae31cacf141669ddfb5da|AKIALALEMEL33243OLIA/);
      expect(r.scrubbed_content.split("\n").length).toBe(content.split("\n").length - 3);
      expect(typeof r.processing_time_ms).toBe("number");
      const clean = await ok(ctx, "scrub_secrets", { content: gitLog });
      expect(clean).toMatchObject({ success: true, scrubbed_content: gitLog, secrets_found: false, secrets_count: 0, detected_types: [] });
    });

    it("says when the scan was cut: truncated and a note naming the rules not run", async () => {
      const { ctx } = await world();
      const filler = "const token = getKey(api, secret); password.length > 0 && run(x);\n";
      const content = `${filler.repeat(Math.floor(950_000 / filler.length))}api_key = "8ae31cacf141669ddfb5da"\n`;
      const r = await ok(ctx, "scrub_secrets", { content });
      expect(r.truncated).toBe(true);
      expect(r.note).toContain("generic-api-key");
      const small = await ok(ctx, "scrub_secrets", { content: 'api_key = "8ae31cacf141669ddfb5da"' });
      expect(small).toMatchObject({ truncated: false, secrets_count: 1 });
      expect(small.note).toBeUndefined();
      const v = await ok(ctx, "validate_content", { content });
      expect(v.findings[0]).toMatchObject({ id: "secret-scan-cut", severity: "warning", rule_id: "SECRET-001" });
    });

    it("refuses bad input: no content, empty, too long, shown characters out of bounds, unknown keys", async () => {
      const { ctx } = await world();
      expect((await fails(ctx, "scrub_secrets", {})).code).toBe("invalid_input");
      expect((await fails(ctx, "scrub_secrets", { content: "" })).code).toBe("invalid_input");
      expect((await fails(ctx, "scrub_secrets", { content: "x".repeat(MAX_CONTENT + 1) })).code).toBe("invalid_input");
      expect((await fails(ctx, "scrub_secrets", { content: "x", show_start: -1 })).code).toBe("invalid_input");
      expect((await fails(ctx, "scrub_secrets", { content: "x", show_end: 17 })).code).toBe("invalid_input");
      expect((await fails(ctx, "scrub_secrets", { content: "x", show_start: 1.5 })).code).toBe("invalid_input");
      expect((await fails(ctx, "scrub_secrets", { content: "x", mask: "#" })).code).toBe("invalid_input");
    });
  });
});

describe("validate_content", () => {
  it("raw_text: secrets are errors, brackets checked, long lines reported", async () => {
    const { ctx } = await world();
    const r = await ok(ctx, "validate_content", { content: `${apiGo}\n(unclosed\n${"x".repeat(130)}` });
    expect(r).toMatchObject({ success: true, passed: false, secrets_scrubbed: true, tiers_run: ["tier1_deterministic", "tier2_heuristic"] });
    expect(r.findings[0]).toEqual({
      id: expect.stringMatching(/^secret-\d+$/),
      severity: "error",
      category: "security",
      rule_id: "SECRET-001",
      message: "Secret detected: aws_key (aws-access-token)",
      line: 20,
    });
    expect(r.findings.find((f: { rule_id: string }) => f.rule_id === "T1-001")).toMatchObject({
      severity: "error",
      category: "syntax",
      message: expect.stringMatching(/^Unclosed bracket: '\(' at position \d+$/),
      line: 26,
    });
    expect(r.findings.find((f: { rule_id: string }) => f.rule_id === "T2-004")).toMatchObject({ severity: "info", category: "style", message: "Line 27 exceeds 120 characters (130)", line: 27 });
    expect(r.by_severity).toEqual({ errors: 2, warnings: 0, info: 1 });
    expect(r.findings_count).toBe(3);
    // Code-only heuristics do not run on raw text.
    expect(r.findings.some((f: { rule_id: string }) => f.rule_id.startsWith("T2-00") && f.rule_id !== "T2-004")).toBe(false);
    // The same content gives the same answer (ids do not come from the clock).
    const again = await ok(ctx, "validate_content", { content: `${apiGo}\n(unclosed\n${"x".repeat(130)}` });
    expect(again.findings).toEqual(r.findings);
  });

  it("scrub_secrets: false skips the secret scan", async () => {
    const { ctx } = await world();
    const r = await ok(ctx, "validate_content", { content: apiGo, scrub_secrets: false });
    expect(r).toMatchObject({ passed: true, secrets_scrubbed: false, findings: [] });
  });

  it("plan_output must be JSON", async () => {
    const { ctx } = await world();
    const bad = await ok(ctx, "validate_content", { content: '{"steps": [1, 2}', content_type: "plan_output" });
    expect(bad.passed).toBe(false);
    expect(bad.findings.map((f: { rule_id: string }) => f.rule_id)).toEqual(["T1-001", "T1-001", "T1-002"]);
    expect(bad.findings[2]).toMatchObject({ severity: "error", category: "schema", message: expect.stringMatching(/^Invalid JSON: /) });
    const good = await ok(ctx, "validate_content", { content: '{"steps": [{"id": 1}]}', content_type: "plan_output" });
    expect(good).toMatchObject({ passed: true, findings: [] });
  });

  it("generated_code gets TODO, console and URL checks; example.com is allowed", async () => {
    const { ctx } = await world();
    const code = [
      "export async function load() {",
      "  // TODO: retry on 503",
      "  console.log('loading')",
      "  const res = await fetch('https://api.acme-corp.io/v1/items')",
      "  const doc = 'https://example.com/docs'",
      "  return res.json() // FIXME",
      "}",
    ].join("\n");
    const r = await ok(ctx, "validate_content", { content: code, content_type: "generated_code", file_path: "src/load.ts" });
    expect(r.passed).toBe(true);
    expect(r.findings.map((f: { rule_id: string; line: number }) => [f.rule_id, f.line])).toEqual([
      ["T2-001", 2],
      ["T2-001", 6],
      ["T2-002", 3],
      ["T2-003", 4],
    ]);
    expect(r.findings[0]).toMatchObject({ severity: "warning", category: "completeness", message: "Found TODO: TODO: retry on 503..." });
    expect(r.findings[2]).toMatchObject({
      severity: "info",
      category: "best_practices",
      message: "Console statement found: console.log(",
      suggestion: "Consider using a proper logging library in production",
    });
    expect(r.findings[3]).toMatchObject({
      category: "maintainability",
      message: "Hardcoded URL found: https://api.acme-corp.io/v1/items...",
      suggestion: "Consider using environment variables for URLs",
    });
    // The same code as a review finding gets none of the code heuristics.
    expect((await ok(ctx, "validate_content", { content: code, content_type: "review_finding" })).findings).toEqual([]);
  });

  it("empty-looking content is a warning; findings stop at 100", async () => {
    const { ctx } = await world();
    expect((await ok(ctx, "validate_content", { content: "   \n " })).findings).toEqual([
      { id: "T1-003-0", severity: "warning", category: "content", rule_id: "T1-003", message: "Content is empty or contains only whitespace" },
    ]);
    const many = await ok(ctx, "validate_content", { content: ")".repeat(500) });
    expect(many.findings_count).toBe(100);
    expect(many.by_severity.errors).toBe(100);
  });

  it("file_path: a lockfile path is exempt from the secret scan, as in gitleaks", async () => {
    const { ctx } = await world();
    expect((await ok(ctx, "validate_content", { content: apiGo, file_path: "web/package-lock.json" })).secrets_scrubbed).toBe(false);
    expect((await ok(ctx, "validate_content", { content: apiGo, file_path: "cmd/api.go" })).secrets_scrubbed).toBe(true);
  });

  it("refuses an unknown content_type and oversized input", async () => {
    const { ctx } = await world();
    expect((await fails(ctx, "validate_content", { content: "x", content_type: "markdown" })).code).toBe("invalid_input");
    expect((await fails(ctx, "validate_content", { content: "x".repeat(MAX_CONTENT + 1) })).code).toBe("invalid_input");
    expect((await fails(ctx, "validate_content", { content: "x", file_path: "" })).code).toBe("invalid_input");
  });
});
