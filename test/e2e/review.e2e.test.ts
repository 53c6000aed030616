/**
 * The review toolset over HTTP: the SDK client on /mcp?toolsets=review against `wrangler dev`
 * (a tenant without GitHub and without a language model, the local default): the deterministic
 * tools answer in full, with SARIF from inside the bundle; the LLM tools refuse plainly.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

type S = Record<string, any>;

const fixture = (name: string) => readFileSync(`${import.meta.dirname}/../fixtures/review/${name}`, "utf8");

describe("review toolset over HTTP (wrangler dev)", () => {
  let client: Client;
  const call = async (name: string, args: Record<string, unknown>): Promise<S> => {
    const r = await client.callTool({ name, arguments: args });
    return { ...(r.structuredContent as S), isError: r.isError === true, text: (r.content as { text: string }[])[0]!.text };
  };
  beforeAll(async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=review`), {
      requestInit: { headers: { Authorization: `Bearer ${inject("keyB")}` } },
    });
    client = new Client({ name: "e2e-review", version: "1.0.0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  // mcp.echo is on every surface (seed 003: always registered).
  it("lists the review tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "check_invariants",
      "get_review_status",
      "get_review_telemetry",
      "list_review_sessions",
      "mcp.echo",
      "pause_review",
      "reactive_review_pr",
      "resume_review",
      "review_auto",
      "review_changes",
      "review_diff",
      "review_git_diff",
      "review_settings",
      "run_static_analysis",
      "scrub_secrets",
      "validate_content",
    ]);
  });

  it("reviews a real diff with the CI gate, SARIF 2.1.0 and markdown; review_auto picks review_diff for it", async () => {
    const diff = fixture("diff/public-api-index.diff");
    const r = await call("review_diff", { diff, options: { include_sarif: true, include_markdown: true, fail_on_severity: "HIGH" } });
    expect(r).toMatchObject({ ok: true, classification: "feature", risk_score: 4, should_fail: true, fail_reasons: ["HIGH PRE002: Possible public API surface change detected"] });
    expect(r.findings.map((f: S) => f.id)).toEqual(["PRE001", "PRE002"]);
    expect(r.sarif).toMatchObject({ version: "2.1.0", runs: [{ tool: { driver: { name: expect.any(String) } } }] });
    expect(r.sarif.runs[0].results.map((x: S) => x.ruleId)).toEqual(["PRE001", "PRE002"]);
    expect(r.markdown).toContain("## Code Review Summary");
    expect(r.text.split("\n")[1]).toBe("CI gate: FAIL (1 reason)");
    const auto = await call("review_auto", { diff });
    expect(auto).toMatchObject({ ok: true, selected_tool: "review_diff", output: { classification: "feature", risk_score: 4 } });
  });

  it("checks inline invariants, scrubs secrets with the gitleaks rules, and validates content", async () => {
    const inv = await call("check_invariants", { diff: fixture("invariants/hono-release-oidc.diff"), invariants: fixture("invariants/hono.review-invariants.yml") });
    expect(inv).toMatchObject({ ok: true, success: true, invariants_path: "(inline)", checked_invariants: 3 });
    expect(inv.findings.map((f: S) => f.id)).toEqual(["CI001"]);
    const key = "AKIALALEMEL33243OLIA";
    const scrubbed = await call("scrub_secrets", { content: `awsToken := "${key}"` });
    expect(JSON.stringify(scrubbed)).not.toContain(key);
    expect(scrubbed.ok).toBe(true);
    const valid = await call("validate_content", { content: `const key = "${key}";\n`, content_type: "generated_code", file_path: "src/aws.ts" });
    expect(valid.ok).toBe(true);
    expect(JSON.stringify(valid)).not.toContain(key);
  });

  it("refuses the LLM review without a configured model, and reads of unknown sessions, with hints", async () => {
    const llm = await call("review_changes", { diff: fixture("diff/public-api-index.diff") });
    expect(llm.isError).toBe(true);
    expect(llm.error).toMatchObject({ code: "llm_not_configured", retryable: false });
    expect(llm.error.hint).toContain("LLM_API_KEY");
    const missing = await call("get_review_status", { session_id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" });
    expect(missing.error).toMatchObject({ code: "session_not_found" });
    const noGitHub = await call("run_static_analysis", { repo: "octocat/Hello-World" });
    expect(noGitHub.error).toMatchObject({ code: "github_not_configured" });
  });
});
