/**
 * Rules every tool keeps, checked across the whole registry, plus the shared pieces the
 * registry implements once: the envelope, strict inputs, idempotency, output schemas.
 */
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { env } from "cloudflare:workers";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../src/db/schema";
import { defineTool } from "../../src/core/define-tool";
import { ALL_TOOLS, selectTools, TOOLSETS } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { toolListing } from "../../src/core/listing";
import { ToolError } from "../../src/core/errors";
import { call, connectClient, count, fails, makeCtx, ok, seedIdentity, type Structured } from "../support/helpers";

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema & { description?: string }>; anyOf?: JsonSchema[]; oneOf?: unknown; allOf?: unknown; required?: string[] };

describe("every tool in the registry", () => {
  it("has a unique snake_case name, a title, a description and a known toolset", () => {
    const names = ALL_TOOLS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    const toolsets = new Set(TOOLSETS.map((t) => t.id));
    for (const t of ALL_TOOLS) {
      // mcp.echo keeps the name seed 003 gives it; every other tool is snake_case.
      if (t.name !== "mcp.echo") expect(t.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(t.title.length).toBeGreaterThan(3);
      expect(t.description.length).toBeGreaterThan(30);
      expect(toolsets.has(t.toolset)).toBe(true);
    }
  });

  it("describes every input parameter, with an object root and no top-level combinators", () => {
    for (const t of ALL_TOOLS) {
      const schema = toolListing(t).inputSchema as JsonSchema & { additionalProperties?: boolean };
      expect(schema.type, t.name).toBe("object");
      expect(schema.additionalProperties, t.name).toBe(false);
      expect(schema.anyOf ?? schema.oneOf ?? schema.allOf, t.name).toBeUndefined();
      // Nested objects (patches, batch items) need descriptions on their fields too.
      const walk = (props: Record<string, JsonSchema & { description?: string; items?: JsonSchema }>, path: string) => {
        for (const [param, prop] of Object.entries(props)) {
          expect(prop.description, `${path}.${param}`).toBeTruthy();
          expect(param, `${path}.${param}`).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
          const inner = prop.properties ?? prop.items?.properties;
          if (inner) walk(inner as never, `${path}.${param}`);
        }
      };
      walk((schema.properties ?? {}) as never, t.name);
    }
  });

  it("has an output schema covering success and the error envelope", () => {
    // mcp.echo alone lists none: it is on every surface, and its answer is its message.
    expect(ALL_TOOLS.filter((t) => t.listOutput === false).map((t) => t.name)).toEqual(["mcp.echo"]);
    for (const t of ALL_TOOLS.filter((t) => t.listOutput !== false)) {
      const out = toolListing(t).outputSchema as JsonSchema;
      expect(out.type, t.name).toBe("object");
      expect(out.anyOf, t.name).toHaveLength(2);
      expect(out.anyOf![1]!.properties!.error, t.name).toBeDefined();
    }
  });

  it("declares all four annotations, truthfully for reads and writes", () => {
    for (const t of ALL_TOOLS) {
      const a = toolListing(t).annotations!;
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        expect(typeof a[hint], `${t.name}.${hint}`).toBe("boolean");
      }
      if (a.readOnlyHint) {
        expect(a.destructiveHint, t.name).toBe(false);
        expect("idempotency_key" in ((toolListing(t).inputSchema as JsonSchema).properties ?? {}), t.name).toBe(false);
      } else {
        expect((toolListing(t).inputSchema as JsonSchema).properties!.idempotency_key, t.name).toBeDefined();
      }
    }
    const log = toolListing(ALL_TOOLS.find((t) => t.name === "log_change")!).annotations!;
    expect(log).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
  });

  it("matches its snapshot (tools/list is the public contract)", async () => {
    for (const t of ALL_TOOLS) {
      await expect(`${JSON.stringify(toolListing(t), null, 2)}\n`).toMatchFileSnapshot(`../__toolsnaps__/${t.name}.json`);
    }
  });
});

describe("surfaces", () => {
  it("selects the default toolsets, named ones, all, and read-only", () => {
    expect(selectTools({ toolsets: [], readonly: false }).map((t) => t.name)).toContain("log_change");
    expect(selectTools({ toolsets: ["changes"], readonly: false })).toHaveLength(10); // the seed's eight, change_verify and mcp.echo
    expect(selectTools({ toolsets: ["all"], readonly: false })).toHaveLength(ALL_TOOLS.length);
    const ro = selectTools({ toolsets: ["all"], readonly: true });
    expect(ro.length).toBeGreaterThan(0);
    expect(ro.every((t) => t.annotations.readOnly)).toBe(true);
    expect(() => selectTools({ toolsets: ["nope"], readonly: false })).toThrow(ToolError);
  });
});

describe("the envelope", () => {
  const boom = defineTool({
    name: "boom",
    title: "Boom",
    toolset: "changes",
    description: "Throws an unexpected error with a secret in its message.",
    input: z.object({}),
    output: z.object({}),
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    run: async () => {
      throw new Error("SELECT * FROM secrets at /srv/app.ts:12");
    },
  });

  it("turns an unexpected exception into internal_error without leaking it", async () => {
    const id = await seedIdentity("env-boom", "agent");
    const result = await callTool(boom, makeCtx(id), {});
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ ok: false, error: { code: "internal_error", retryable: true } });
    expect(JSON.stringify(result)).not.toContain("secrets");
    expect(JSON.stringify(result)).not.toContain("app.ts");
  });

  it("puts a one-line summary and the JSON in the text content", async () => {
    const id = await seedIdentity("env-text", "agent");
    const def = ALL_TOOLS.find((t) => t.name === "blame")!;
    const result = await callTool(def, makeCtx(id), { entity_path: "users.email" });
    const text = (result.content[0] as { text: string }).text;
    expect(text.split("\n")[0]).toBe("No history found for 'users.email'");
    expect(JSON.parse(text.split("\n").slice(1).join("\n"))).toEqual(result.structuredContent);
  });

  it("validates both success and failure payloads against the advertised output schema", async () => {
    const id = await seedIdentity("env-schema", "agent");
    const ctx = makeCtx(id);
    await ok(ctx, "log_change", {
      entity_path: "users.email",
      change_type: "add",
      entity_type: "column",
      reasoning: "Store email for password reset links",
      revisit_after: "1m",
      changeset_id: "cs-1",
    });
    await ok(ctx, "log_change", { entity_path: "users.email", change_type: "revert", reasoning: "Rolled back: went with a separate contacts table instead" });
    const validator = new CfWorkerJsonSchemaValidator();
    const samples: Record<string, unknown[]> = {
      log_change: [
        { entity_path: "a.b", change_type: "add" },
        { entity_path: "a.b", change_type: "nope" },
      ],
      change_diff: [{ entity_path: "users" }, { entity_path: "" }],
      blame: [{ entity_path: "users.email" }, { entity_path: "missing" }, {}],
      change_history: [{}, { since: "garbage" }],
      changeset: [{ changeset_id: "cs-1" }, { changeset_id: "none" }],
      change_search: [{ query: "email" }, { query: "" }],
      prior_attempts: [{ entity_path: "users", min_confidence: "proximity_low" }, { fuzzy: "email column" }, {}],
      stale_decisions: [{}, { limit: 0 }],
      change_verify: [{}, { cursor: "nope" }],
    };
    for (const t of ALL_TOOLS) {
      const check = validator.getValidator(toolListing(t).outputSchema as never);
      for (const args of samples[t.name] ?? []) {
        const result = await callTool(t, ctx, args);
        const verdict = check(result.structuredContent);
        expect(verdict.valid, `${t.name}(${JSON.stringify(args)}): ${verdict.errorMessage}`).toBe(true);
      }
    }
  });
});

describe("strict inputs", () => {
  it("accepts camelCase aliases and rejects unknown keys with the allowed ones in the hint", async () => {
    const id = await seedIdentity("inputs", "agent");
    const ctx = makeCtx(id);
    const logged = await ok(ctx, "log_change", { entityPath: "orders.total", changeType: "modify", changesetId: "cs", reasoning: "Totals now include tax for EU" });
    expect(logged.status).toBe("ok");
    const err = await fails(ctx, "change_diff", { entity_path: "orders", colour: "red" });
    expect(err.code).toBe("invalid_input");
    expect(err.message).toContain("colour");
    expect(err.hint).toContain("entity_path");
    expect(err.hint).toContain("limit");
    const both = await fails(ctx, "change_diff", { entity_path: "orders", entityPath: "orders" });
    expect(both.code).toBe("invalid_input");
  });

  it("applies the same rules inside nested objects (patches and batch items)", async () => {
    const id = await seedIdentity("inputs-nested", "agent");
    const ctx = makeCtx(id);
    await ok(ctx, "project_create", { title: "Nested", key: "NEST" });
    const patched = await ok(ctx, "project_update", { projectId: "NEST", patch: { targetOn: "2026-12-01", ownerActorId: "me" } });
    expect(patched.project).toMatchObject({ target_on: "2026-12-01", owner_actor_id: id.actorId });
    const bad = await fails(ctx, "project_update", { project_id: "NEST", patch: { colour: "red" } });
    expect(bad.message).toContain("in patch: colour");
    expect(bad.hint).toContain("target_on");
    const many = await ok(ctx, "task_create_many", { project_id: "NEST", tasks: [{ title: "A" }, { title: "B", dependsOn: [{ batchIndex: 0 }] }] });
    const b = await ok(ctx, "task_get", { task_id: many.task_ids[1] });
    expect(b.task.depends_on).toEqual([many.task_ids[0]]);
    const deep = await fails(ctx, "task_create_many", { project_id: "NEST", tasks: [{ title: "C", weight: 3 }] });
    expect(deep.message).toContain("in tasks[0]: weight");
  });

  it("rejects non-object arguments, NUL characters and wrong types, writing nothing", async () => {
    const id = await seedIdentity("inputs-bad", "agent");
    const ctx = makeCtx(id);
    expect((await fails(ctx, "blame", ["users"])).code).toBe("invalid_input");
    expect((await fails(ctx, "blame", "users")).code).toBe("invalid_input");
    expect((await fails(ctx, "log_change", { entity_path: "a\u0000b", change_type: "add" })).message).toContain("NUL");
    expect((await fails(ctx, "change_diff", { entity_path: "a", limit: "5" })).message).toContain("limit");
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", id.tenantId)).toBe(0);
  });
});

describe("idempotency keys", () => {
  it("replays the first result, refuses a reused key with other arguments, and scopes keys per actor", async () => {
    const a = await seedIdentity("idem", "agent-a");
    const b = await seedIdentity("idem", "agent-b");
    const args = { entity_path: "cfg.timeout", change_type: "modify", reasoning: "Raise the timeout for slow uploads", idempotency_key: "k-1" };
    const first = await ok(makeCtx(a), "log_change", args);
    expect(first.idempotent_replay).toBeUndefined();
    const again = await ok(makeCtx(a), "log_change", args);
    expect(again).toMatchObject({ id: first.id, idempotent_replay: true });
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", a.tenantId)).toBe(1);
    const reused = await fails(makeCtx(a), "log_change", { ...args, reasoning: "Something else entirely" });
    expect(reused.code).toBe("idempotency_key_reused");
    const other = await ok(makeCtx(b), "log_change", args);
    expect(other.id).not.toBe(first.id);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", a.tenantId)).toBe(2);
  });

  it("lets exactly one of several racing calls with the same key write", async () => {
    const id = await seedIdentity("idem-race", "agent");
    const args = { entity_path: "svc.retry", change_type: "add", reasoning: "Retry transient 503s from the gateway", idempotency_key: "race" };
    const results: Structured[] = await Promise.all(Array.from({ length: 6 }, () => call(makeCtx(id), "log_change", args)));
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", id.tenantId)).toBe(1);
    const ids = new Set(results.filter((r) => r.ok).map((r) => r.id));
    expect(ids.size).toBe(1);
    for (const r of results.filter((r) => !r.ok)) expect(r.error).toMatchObject({ code: "idempotency_in_progress", retryable: true });
  });

  it("does not burn a key on a failed call", async () => {
    const id = await seedIdentity("idem-fail", "agent");
    const bad = await fails(makeCtx(id), "log_change", { entity_path: "x.y", change_type: "add", revisit_after: "soon", idempotency_key: "k" });
    expect(bad.code).toBe("invalid_revisit_after");
    const good = await ok(makeCtx(id), "log_change", { entity_path: "x.y", change_type: "add", revisit_after: "30d", idempotency_key: "k" });
    expect(good.idempotent_replay).toBeUndefined();
  });
});

/** Arguments that make each tool succeed, in order, in a fresh tenant (project_create runs first). */
const SAMPLE_DIFF = "diff --git a/src/cart.ts b/src/cart.ts\n--- a/src/cart.ts\n+++ b/src/cart.ts\n@@ -1 +1 @@\n-export const total = 1;\n+export const total = eval('2');\n";

const SAMPLE_ARGS: Record<string, Record<string, unknown>> = {
  log_change: { entity_path: "a.b", change_type: "add" },
  change_diff: { entity_path: "a" },
  blame: { entity_path: "a" },
  change_history: {},
  changeset: { changeset_id: "x" },
  change_search: { query: "abc" },
  prior_attempts: { entity_path: "a", fuzzy: "an earlier try" },
  stale_decisions: {},
  change_verify: {},
  change_import: { events: [{ entity_path: "a.imported", change_type: "add", timestamp: "2024-01-01T00:00:00Z", import_key: "sample:1" }] },
  change_import_git: { repo: "acme/api" },
  whoami: {},
  register_actor: { external_ref: "helper-bot" },
  actor_query: {},
  project_create: { title: "No Codegen", key: "NOCG" },
  project_update: { project_id: "NOCG", patch: { summary: "checked" } },
  project_query: { detail: "full" },
  project_brief: { project: "NOCG" },
  task_create: { project_id: "NOCG", title: "First", acceptance_criteria: [{ text: "works" }] },
  task_create_many: { project_id: "NOCG", tasks: [{ title: "A" }, { title: "B", depends_on: [{ batch_index: 0 }] }] },
  task_update: { task_id: "NOCG-1", patch: { status: "in_progress" } },
  task_assign: { task_id: "NOCG-1", actor_id: "me" },
  task_query: { project_id: "NOCG", state: "ready" },
  task_get: { task_id: "NOCG-3", include: ["brief"] },
  task_link: { task_id: "NOCG-2", add_depends_on: ["NOCG-1"] },
  task_claim: { project_id: "NOCG" },
  task_release: { task_id: "NOCG-1" },
  decision_log: { title: "Storage", choice: "D1", options: [{ label: "D1", pros: ["local"] }], project_id: "NOCG" },
  decision_set_status: { decision_id: "$decision", status: "proposed" },
  decision_query: { q: "storage", semantic: true },
  knowledge_write: { body: "# Restoring D1\nUse time travel.", kind: "runbook", project_id: "NOCG", tags: ["d1"] },
  knowledge_update: { note_id: "$note", patch: { tags: ["d1", "ops"] } },
  knowledge_search: { q: "restore the database", project_id: "NOCG" },
  comment_add: { object_type: "project", object_id: "$project", body: "Looks good @me", mentions: ["me"] },
  comment_query: { object_type: "project", object_id: "$project" },
  activity_log: { verb: "deploy.finished", summary: "Shipped" },
  activity_query: { verb: "task.*" },
  notification_query: { unread_only: true },
  notification_mark_read: { ids: ["none"] },
  handoff_create: { to_actor_ids: ["me"], title: "Approve the plan", kind: "approval", options: ["approve", "reject"] },
  handoff_claim: { handoff_id: "$handoff" },
  handoff_respond: { handoff_id: "$handoff", response: { chosen_option: "approve", text: "fine" } },
  handoff_resolve: { handoff_id: "$handoff" },
  handoff_query: { direction: "any" },
  inbox: { ack: ["$handoff"] },
  repo_register: { remote_url: "git@github.com:acme/api.git" },
  git_status: { repo: "octocat/Hello-World", include_submodules: true },
  git_inventory: { repos: ["octocat/Hello-World"] },
  git_parity: { pairs: [{ left: "octocat/Hello-World@main", right: "octocat/Hello-World@dev" }] },
  list_presets: { repo: "octocat/Hello-World" },
  git_log: { repo: "octocat/Hello-World" },
  git_diff_summary: { repo: "octocat/Hello-World", range: "main...dev" },
  repo_link: { project_id: "NOCG", repo_slug: "acme/api" },
  repo_query: { project_id: "NOCG" },
  task_code_ref: { task_id: "NOCG-1", ref_type: "pr", pr_number: 7 },
  code_ref_add: { object_type: "project", object_id: "$project", ref_type: "branch", branch: "main" },
  code_ref_update: { code_ref_id: "$code_ref", patch: { pr_state: "merged" } },
  code_ref_query: { object_type: "task", object_id: "NOCG-1" },
  attach_add: { object_type: "task", object_id: "NOCG-1", kind: "file", storage_path: "logs/run.txt", content_base64: "aGVsbG8=", mime_type: "text/plain" },
  attach_remove: { attachment_id: "$attachment" },
  attachment_query: { object_type: "task", object_id: "NOCG-1" },
  feature_request_create: { title: "Search misses short words", kind: "friction", fingerprint: "search:short" },
  feature_request_query: { kind: "friction" },
  feature_request_set_status: { id: "0190a4e2-0000-7000-8000-000000000000", status: "accepted", note: "Planned" },
  guide: { topic: "the-loop" },
  skill_upsert: { slug: "release-checklist", body: "# Release\n1. Tag", description: "Before a release" },
  skill_list: { include_body: true },
  skill_get: { slug: "release-checklist" },
  search: { q: "storage", object_types: ["decision", "task"], limit: 5 },
  run_fork: { label: "write the tests", goal: "cover the runs room", agent_role: "test-writer" },
  run_heartbeat: { head_sha: "0123abc", branch: "main", dirty: false, counts: { tests_passed: 3 } },
  run_query: { actor_id: "me", status: ["running"] },
  run_get: { run_key: "$run", include_children: true },
  run_summary: {},
  run_end: { run_key: "$run", status: "succeeded", counts: { tests_passed: 4 } },
  path_reserve: { repository_id: "acme/api", paths: ["src/auth/**"], reason: "login rewrite" },
  path_reservations: { repository_id: "acme/api", paths: ["src/auth/login.ts"] },
  webhook_subscribe: { url: "https://hooks.example.com/ledger", kinds: ["mention"] },
  webhook_deliveries: {},
  webhook_replay: { since: "24h" },
  path_release: { repository_id: "acme/api", paths: ["src/auth/**"] },
  overseer_message: { to: ["me"], message: "Stop and read the new schema decision first." },
  provenance: { repository_id: "acme/api", path: "src/auth/login.ts", limit: 50 },
  batch_commit: { repo: "acme/api", commits: [{ message: "docs: note", files: [{ path: "NOTES.md", content: "note" }] }] },
  git_merge: { repo: "acme/api", sources: ["feature/a"], strategy: "auto" },
  git_cherry_pick: { repo: "acme/api", sources: ["main..feature/a"] },
  docs_execute: { operations: [{ op: "add", params: { name: "notes/a.md", content: "# A" } }] },
  docs_query: { steps: [{ op: "list" }, { op: "get", params: { hash: "$prev.documents[0].hash" } }] },
  "mcp.echo": { message: "hello" },
  docs_session: { action: "start", params: { name: "contract" } },
  semantic_search: { query: "where is the cart total computed" },
  codebase_retrieval: { query: "cart total", options: { file_types: [".ts"] } },
  get_file: { path: "src/cart.ts" },
  get_context_for_prompt: { query: "cart total" },
  git_commit_retrieval: { query: "cart" },
  get_workspace_info: {},
  index_workspace: { repo: "acme/api", ref: "main" },
  // A client without elicitation confirms a whole re-index with the parameter.
  reindex_workspace: { repo: "acme/api", ref: "main", confirm: true },
  index_status: {},
  tool_manifest: {},
  clear_index: { repo: "acme/api" },
  symbol_search: { query: "cart" },
  symbol_definition: { symbol: "cartTotal" },
  symbol_references: { symbol: "cartTotal" },
  find_callers: { symbol: "cartTotal" },
  find_callees: { symbol: "cartTotal" },
  impact_analysis: { paths: ["src/cart.ts"] },
  review_diff: { diff: SAMPLE_DIFF, options: { include_sarif: true, include_markdown: true } },
  check_invariants: {
    diff: SAMPLE_DIFF,
    invariants: "security:\n  - id: SEC001\n    rule: No eval\n    paths: ['src/**']\n    severity: HIGH\n    category: security\n    deny:\n      regex: 'eval\\('\n",
  },
  scrub_secrets: { content: "token = ghp_0123456789abcdefghijABCDEFGHIJ012345" },
  validate_content: { content: "const total = 1;", content_type: "generated_code", file_path: "src/cart.ts" },
  run_static_analysis: { repo: "acme/api", options: { analyzers: ["tsc"] } },
  review_settings: { repo: "acme/api" },
  review_auto: { diff: SAMPLE_DIFF, review_diff_options: { max_findings: 5 }, response_version: "v2" },
  review_changes: { diff: SAMPLE_DIFF },
  review_git_diff: { repo: "acme/api", target: "#12" },
  reactive_review_pr: { repo: "acme/api", commit_hash: "0123456789abcdef0123456789abcdef01234567", base_ref: "main", changed_files: "src/cart.ts" },
  get_review_status: { session_id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" },
  get_review_telemetry: { session_id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" },
  pause_review: { session_id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" },
  resume_review: { session_id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" },
  list_review_sessions: { repo: "acme/api", pull_number: 12, status: ["executing", "paused"], limit: 5 },
  save_plan: {
    plan: {
      id: "contract-plan",
      goal: "Show the cart total",
      steps: [
        { step_number: 1, title: "Compute the total" },
        { step_number: 2, title: "Test it", depends_on: [1] },
      ],
    },
    name: "Cart total",
    tags: ["cart"],
  },
  load_plan: { name: "cart total" },
  list_plans: { tags: ["cart"] },
  view_history: { plan_id: "contract-plan" },
  compare_plan_versions: { plan_id: "contract-plan", from_version: 1, to_version: 1 },
  rollback_plan: { plan_id: "contract-plan", target_version: 1, reason: "contract" },
  start_step: { plan_id: "contract-plan", step_number: 1 },
  complete_step: { plan_id: "contract-plan", step_number: 1, notes: "computed", files_modified: ["src/cart.ts"] },
  fail_step: { plan_id: "contract-plan", step_number: 2, error: "flaky test", retry: true },
  view_progress: { plan_id: "contract-plan" },
  plan_to_tasks: { plan_id: "contract-plan", project_id: "$project" },
  visualize_plan: { plan_id: "contract-plan", diagram_type: "gantt" },
  execute_plan: { plan_id: "contract-plan", mode: "single_step", step_number: 1, additional_context: "Keep the total in cents." },
  delete_plan: { plan_id: "contract-plan" },
  request_approval: { plan_id: "contract-plan", approver_actor_ids: ["helper-bot"], note: "Please check the order of the steps." },
  // The only caller here is the request's requester, who may not answer it: the call stops at that check.
  respond_approval: { request_id: "$approval", action: "approve", comment: "contract" },
  list_approvals: { plan_id: "contract-plan", status: "pending" },
  create_plan: { task: "Show the cart total with tax on the checkout page", max_context_files: 5, save_name: "Cart tax", save_tags: ["cart"] },
  refine_plan: { current_plan: JSON.stringify({ goal: "Show the cart total", steps: [{ step_number: 1, title: "Compute the total" }] }), feedback: "Add a step for tests", focus_steps: [1] },
};

/** The code tools without an index (and without GitHub) answer these, after validation and the envelope. */
const CODE_REFUSALS = new Set(["index_not_found", "github_not_configured"]);
/** The review tools stop here without GitHub or a language model configured, or a session to read. */
const REVIEW_REFUSALS = new Set(["github_not_configured", "llm_not_configured", "session_not_found"]);
/** The tools that answer to someone other than the caller (an approver, an operator) stop at that check here (one plain identity). */
const CALLER_REFUSALS: Record<string, string> = { respond_approval: "forbidden", feature_request_set_status: "operator_required", overseer_message: "operator_required" };
/** The plan tools that write with a language model stop here without one. */
const PLAN_LLM_REFUSALS = new Set(["llm_not_configured"]);

describe("no code generation at run time", () => {
  it("serves a whole MCP session without eval or new Function (blocked in production Workers)", async () => {
    const id = await seedIdentity("no-codegen", "agent");
    const realFunction = globalThis.Function;
    const realEval = globalThis.eval;
    const trap = () => {
      throw new Error("code generation attempted");
    };
    globalThis.Function = new Proxy(realFunction, { construct: trap, apply: trap });
    globalThis.eval = trap as typeof eval;
    try {
      expect(() => new Function("return 1")).toThrow("code generation attempted");
      const { client, transport } = await connectClient(id.key, "/mcp?toolsets=all");
      await client.listTools();
      // Creators first, so the tools that read or change their objects find them.
      const first = [
        "save_plan",
        "register_actor",
        "request_approval",
        "project_create",
        "task_create",
        "task_create_many",
        "task_claim",
        "decision_log",
        "handoff_create",
        "repo_register",
        "repo_link",
        "task_code_ref",
        "attach_add",
        "skill_upsert",
        "knowledge_write",
        "run_fork",
      ];
      // Deletions last, so the tools that read what they delete find it.
      const last = ["delete_plan"];
      const rank = (name: string) => (first.includes(name) ? first.indexOf(name) : last.includes(name) ? first.length + 1 : first.length);
      const created: Record<string, string> = {};
      const ordered = [...ALL_TOOLS].sort((a, b) => rank(a.name) - rank(b.name));
      for (const t of ordered) {
        expect(SAMPLE_ARGS[t.name], `add sample arguments for ${t.name} to SAMPLE_ARGS`).toBeDefined();
        // "$name" stands for the id of an object an earlier call created.
        const args = JSON.parse(JSON.stringify(SAMPLE_ARGS[t.name]).replace(/"\$(\w+)"/g, (_m, k: string) => JSON.stringify(created[k] ?? k)));
        const result = await client.callTool({ name: t.name, arguments: args });
        if (t.toolset === "code" && result.isError) {
          expect(CODE_REFUSALS.has((result.structuredContent as { error: { code: string } }).error.code), `${t.name}: ${JSON.stringify(result.structuredContent)}`).toBe(true);
          continue;
        }
        if (t.toolset === "review" && result.isError) {
          expect(REVIEW_REFUSALS.has((result.structuredContent as { error: { code: string } }).error.code), `${t.name}: ${JSON.stringify(result.structuredContent)}`).toBe(true);
          continue;
        }
        if (t.name in CALLER_REFUSALS) {
          expect((result.structuredContent as { error?: { code: string } }).error?.code, t.name).toBe(CALLER_REFUSALS[t.name]);
          continue;
        }
        if (t.toolset === "plans" && result.isError) {
          expect(PLAN_LLM_REFUSALS.has((result.structuredContent as { error: { code: string } }).error.code), `${t.name}: ${JSON.stringify(result.structuredContent)}`).toBe(true);
          continue;
        }
        if (t.toolset === "git" || t.name === "change_import_git") {
          // GitHub-backed tools get this far (validation, the envelope) and stop at the missing credentials.
          expect((result.structuredContent as { error?: { code: string } }).error?.code, t.name).toBe("github_not_configured");
          continue;
        }
        expect(result.isError, `${t.name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
        const sc = result.structuredContent as {
          request?: { id: string };
          project?: { id: string };
          decision?: { id: string };
          handoff?: { id: string };
          code_ref?: { id: string; ref_type: string };
          attachment?: { id: string };
          note?: { id: string };
          run?: { run_key: string };
        };
        if (sc.request && t.name === "request_approval") created.approval = sc.request.id;
        if (sc.project) created.project = sc.project.id;
        if (sc.decision) created.decision = sc.decision.id;
        if (sc.handoff) created.handoff = sc.handoff.id;
        if (sc.code_ref?.ref_type === "pr") created.code_ref = sc.code_ref.id;
        if (sc.attachment) created.attachment = sc.attachment.id;
        // prior_attempts also answers a (string) `note`: only the knowledge note is an object to refer to.
        if (sc.note && t.name === "knowledge_write") created.note = sc.note.id;
        if (sc.run && t.name === "run_fork") created.run = sc.run.run_key;
      }
      await transport.terminateSession();
      await client.close();
    } finally {
      globalThis.Function = realFunction;
      globalThis.eval = realEval;
    }
  }, 30_000); // one call to every tool in the registry: seconds on a loaded machine
});

describe("the drizzle schema", () => {
  it("describes every table and column the migrations create, and nothing else", async () => {
    const tables = (Object.values(schema) as unknown[]).filter((t): t is SQLiteTable => t instanceof SQLiteTable).map((t) => getTableConfig(t));
    const migrated = await env.DB.prepare(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' AND substr(name, 1, 4) <> '_cf_' AND substr(name, 1, 3) <> 'd1_' AND instr(name, '_fts') = 0`,
    ).all<{ name: string }>();
    expect(tables.map((t) => t.name).sort()).toEqual(migrated.results.map((r) => r.name).sort());
    for (const t of tables) {
      const columns = await env.DB.prepare(`SELECT name FROM pragma_table_info(?)`).bind(t.name).all<{ name: string }>();
      expect(t.columns.map((c) => c.name).sort(), t.name).toEqual(columns.results.map((c) => c.name).sort());
    }
  });
});
