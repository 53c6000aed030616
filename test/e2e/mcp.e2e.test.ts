/** The whole server as a user meets it: `wrangler dev`, a key from the keys command, the SDK client. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ALL_TOOL_NAMES } from "../support/tool-names";

const baseUrl = inject("baseUrl");

async function connect(key: string, query = ""): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${query}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

type S = Record<string, unknown> & { ok: boolean; items?: Array<Record<string, unknown>> };
const structured = (r: Awaited<ReturnType<Client["callTool"]>>) => r.structuredContent as S;

describe("agent-ledger over HTTP (wrangler dev)", () => {
  let a: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    // Every output schema listed, so the SDK client validates every result against its tool's schema.
    a = await connect(inject("keyA"), "?toolsets=all&output_schemas=full");
  });
  afterAll(async () => {
    await a.client.close();
  });

  it("initializes with a session and lists every tool", async () => {
    expect(a.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.client.getServerVersion()).toMatchObject({ name: "agent-ledger" });
    const { tools } = await a.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOL_NAMES);
    // mcp.echo, listed on every surface, is the one tool that lists no output schema (its answer is still validated).
    for (const t of tools) if (t.name !== "mcp.echo") expect(t.outputSchema, t.name).toBeDefined();
    expect(tools.find((t) => t.name === "mcp.echo")?.outputSchema).toBeUndefined();
  });

  it("calls every tool for real", async () => {
    const c = a.client;
    const logged = structured(
      await c.callTool({
        name: "log_change",
        arguments: {
          entity_path: "./users.email",
          change_type: "add",
          entity_type: "column",
          reasoning: "Email needed for password reset links",
          changeset_id: "e2e-auth",
          project: "web",
          revisit_after: "90d",
        },
      }),
    );
    expect(logged).toMatchObject({ ok: true, status: "ok", error: "" });
    const reverted = structured(
      await c.callTool({
        name: "log_change",
        arguments: {
          entity_path: "users.email",
          change_type: "revert",
          reasoning: "Reverted: went with a separate contacts table instead",
          changeset_id: "e2e-auth",
          project: "web",
          stale_when: "contacts table dropped",
        },
      }),
    );
    expect(reverted.ok).toBe(true);

    const blame = structured(await c.callTool({ name: "blame", arguments: { entity_path: "users.email" } }));
    expect(blame).toMatchObject({ ok: true, change_type: "revert", agent: "claude-code", status: "reverted", session_id: a.transport.sessionId });
    const diff = structured(await c.callTool({ name: "change_diff", arguments: { entity_path: "users" } }));
    expect(diff.items!.map((e) => e.change_type)).toEqual(["revert", "add"]);
    const history = structured(await c.callTool({ name: "change_history", arguments: { since: "1h", project: "web" } }));
    expect(history.items).toHaveLength(2);
    const changeset = structured(await c.callTool({ name: "changeset", arguments: { changeset_id: "e2e-auth" } }));
    expect(changeset.items!.map((e) => e.change_type)).toEqual(["add", "revert"]);
    const search = structured(await c.callTool({ name: "change_search", arguments: { query: "contacts TABLE" } }));
    expect(search.items).toHaveLength(1);
    // The global search sees the same event through the index migration 0015's triggers keep.
    const global = structured(await c.callTool({ name: "search", arguments: { q: "contacts table" } }));
    expect(global.items).toMatchObject([{ object_type: "event", title: "users.email", rank: 1 }]);
    const prior = structured(await c.callTool({ name: "prior_attempts", arguments: { entity_path: "users" } }));
    expect(prior.items![0]).toMatchObject({ outcome: "reverted", confidence: "exact" });
    const stale = await c.callTool({ name: "stale_decisions", arguments: {} });
    expect(stale.isError).toBeFalsy();
    expect(structured(stale).items).toEqual([]);
  });

  it("reports bad input as a tool error the model can act on", async () => {
    const r = await a.client.callTool({ name: "change_history", arguments: { since: "last tuesday" } });
    expect(r.isError).toBe(true);
    expect(structured(r)).toMatchObject({ ok: false, error: { code: "invalid_since" } });
  });

  it("keeps tenants apart", async () => {
    const b = await connect(inject("keyB"));
    const blame = structured(await b.client.callTool({ name: "blame", arguments: { entity_path: "users.email" } }));
    expect(blame).toMatchObject({ ok: true, id: "", error: "No history found for 'users.email'" });
    const search = structured(await b.client.callTool({ name: "change_search", arguments: { query: "contacts" } }));
    expect(search.items).toEqual([]);
    expect(structured(await b.client.callTool({ name: "search", arguments: { q: "contacts" } })).items).toEqual([]);
    await b.transport.terminateSession();
    await b.client.close();
  });

  it("serves a read-only surface and a named toolset", async () => {
    const ro = await connect(inject("keyA"), "?readonly=1&toolsets=all");
    const { tools } = await ro.client.listTools();
    expect(tools.map((t) => t.name)).not.toContain("log_change");
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "actor_query",
        "blame",
        "change_diff",
        "change_verify",
        "change_history",
        "change_search",
        "changeset",
        "prior_attempts",
        "project_brief",
        "project_query",
        "stale_decisions",
        "task_get",
        "task_query",
        "tool_manifest",
        "activity_query",
        "comment_query",
        "decision_query",
        "notification_query",
        "path_reservations",
        "webhook_deliveries",
        "provenance",
        "handoff_query",
        "repo_query",
        "code_ref_query",
        "attachment_query",
        "feature_request_query",
        "guide",
        "skill_get",
        "skill_list",
        "search",
        "knowledge_search",
        "run_query",
        "run_get",
        "run_summary",
        "git_status",
        "git_inventory",
        "git_parity",
        "list_presets",
        "git_log",
        "git_diff_summary",
        "docs_query",
        "mcp.echo",
        "semantic_search",
        "codebase_retrieval",
        "get_file",
        "get_context_for_prompt",
        "git_commit_retrieval",
        "get_workspace_info",
        "index_status",
        "symbol_search",
        "symbol_definition",
        "symbol_references",
        "find_callers",
        "find_callees",
        "impact_analysis",
        "review_diff",
        "check_invariants",
        "scrub_secrets",
        "validate_content",
        "run_static_analysis",
        "review_auto",
        "review_changes",
        "review_git_diff",
        "get_review_status",
        "get_review_telemetry",
        "list_review_sessions",
        "load_plan",
        "list_plans",
        "view_history",
        "compare_plan_versions",
        "list_approvals",
        "view_progress",
        "visualize_plan",
      ].sort(),
    );
    await ro.client.close();
    const named = await connect(inject("keyA"), "?toolsets=changes");
    expect((await named.client.listTools()).tools).toHaveLength(10); // the seed's eight, change_verify and mcp.echo
    await named.client.close();
  });

  it("mints the session's run on its first write, attributes writes to it, and starts afresh after run_end", async () => {
    const s = await connect(inject("keyA"), "?toolsets=runs,projects,collab");
    const c = s.client;
    expect(structured(await c.callTool({ name: "run_summary", arguments: {} }))).toMatchObject({ ok: false, error: { code: "no_current_run" } });
    const created = structured(await c.callTool({ name: "project_create", arguments: { title: "E2E runs" } }));
    const summary = structured(await c.callTool({ name: "run_summary", arguments: {} }));
    expect(summary).toMatchObject({ ok: true, run: { kind: "session", status: "running", session_id: s.transport.sessionId }, activity_total: 1 });
    const run = summary.run as { id: string; run_key: string };
    const feed = structured(await c.callTool({ name: "activity_query", arguments: { run_id: run.run_key } }));
    expect(feed.items!.map((x) => x.object_id)).toEqual([(created.project as { id: string }).id]);
    const child = structured(await c.callTool({ name: "run_fork", arguments: { label: "e2e child" } }));
    expect(child).toMatchObject({ ok: true, parent_run_key: run.run_key, run: { kind: "subagent", root_run_id: run.id } });
    const tree = structured(await c.callTool({ name: "run_get", arguments: { run_key: run.run_key, include_children: true } }));
    expect((tree.children as Array<{ id: string }>).map((x) => x.id)).toEqual([(child.run as { id: string }).id]);
    expect(structured(await c.callTool({ name: "run_end", arguments: { status: "succeeded" } }))).toMatchObject({ ok: true, session_run_released: true });
    await c.callTool({ name: "project_create", arguments: { title: "E2E runs again" } });
    const next = structured(await c.callTool({ name: "run_summary", arguments: {} }));
    expect((next.run as { id: string }).id).not.toBe(run.id);
    await s.transport.terminateSession();
    await c.close();
  });

  it("writes a note, embeds it after the response, and finds it by words and meaning", async () => {
    const s = await connect(inject("keyA"));
    const c = s.client;
    const written = structured(
      await c.callTool({ name: "knowledge_write", arguments: { title: "Restoring D1", body: "Use a time travel bookmark to restore the database.", kind: "runbook", tags: ["d1"] } }),
    );
    expect(written).toMatchObject({ ok: true, embedding_status: "pending" });
    const id = (written.note as { id: string }).id;
    // The embedding is made after the response (waitUntil); poll until the note reports it.
    let item: S | undefined;
    for (let i = 0; i < 50 && item?.embedding_status !== "ready"; i++) {
      const found = structured(await c.callTool({ name: "knowledge_search", arguments: { q: "restore the database" } }));
      expect(found).toMatchObject({ ok: true, mode: "hybrid", embedder: "local-hash-512" });
      item = (found.items as S[]).find((x) => x.id === id);
      if (item?.embedding_status !== "ready") await new Promise((r) => setTimeout(r, 100));
    }
    expect(item).toMatchObject({ id, embedding_status: "ready", lexical_rank: 1 });
    expect(item!.similarity).toBeGreaterThan(0.2);
    await s.transport.terminateSession();
    await c.close();
  });

  it("ends the session on DELETE; the id is then unknown", async () => {
    const s = await connect(inject("keyA"));
    const sessionId = s.transport.sessionId!;
    await s.transport.terminateSession();
    const res = await fetch(`${baseUrl}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${inject("keyA")}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": sessionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(404);
    await s.client.close();
  });

  it("refuses a request without a key", async () => {
    const res = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
  });

  it("runs a task flow: plan, claim the right task, race for the rest, finish", async () => {
    const c = a.client;
    const project = structured(await c.callTool({ name: "project_create", arguments: { title: "E2E Flow", key: "FLOW" } }));
    expect(project.ok).toBe(true);
    const plan = structured(
      await c.callTool({
        name: "task_create_many",
        arguments: {
          project_id: "FLOW",
          tasks: [
            { title: "Schema", priority: 0, acceptance_criteria: [{ text: "migration applied" }] },
            { title: "API", priority: 1, depends_on: [{ batch_index: 0 }] },
            { title: "Docs", priority: 3 },
            { title: "Metrics", priority: 3 },
            { title: "Alerts", priority: 3 },
          ],
        },
      }),
    );
    expect(plan.refs).toEqual(["FLOW-1", "FLOW-2", "FLOW-3", "FLOW-4", "FLOW-5"]);
    const first = structured(await c.callTool({ name: "task_claim", arguments: { project_id: "FLOW" } }));
    expect(first).toMatchObject({ claimed: true, task: { ref: "FLOW-1", status: "in_progress" } });
    const refused = await c.callTool({ name: "task_update", arguments: { task_id: "FLOW-1", patch: { status: "done" } } });
    expect(structured(refused)).toMatchObject({ ok: false, error: { code: "criteria_unmet" } });
    const done = structured(await c.callTool({ name: "task_update", arguments: { task_id: "FLOW-1", patch: { status: "done", acceptance_criteria: [{ text: "migration applied", met: true }] } } }));
    expect(done.task).toMatchObject({ status: "done" });

    // Four more agents of the same tenant race for the four remaining tasks (FLOW-2 is now ready).
    const racers = await Promise.all(inject("raceKeys").map((k) => connect(k)));
    const claims = await Promise.all(racers.map((r) => r.client.callTool({ name: "task_claim", arguments: { project_id: "FLOW" } })));
    const refs = claims
      .map((r) => (structured(r).task as { ref: string } | null)?.ref)
      .filter(Boolean)
      .sort();
    expect(refs).toEqual(["FLOW-2", "FLOW-3", "FLOW-4", "FLOW-5"]);
    const empty = structured(await c.callTool({ name: "task_claim", arguments: { project_id: "FLOW" } }));
    expect(empty).toMatchObject({ claimed: false, reason: "pool_empty" });
    await Promise.all(racers.map((r) => r.client.close()));

    const brief = structured(await c.callTool({ name: "project_brief", arguments: { project: "flow" } }));
    expect(brief.task_counts).toMatchObject({ total: 5, by_status: { done: 1, in_progress: 4 } });
    const me = structured(await c.callTool({ name: "whoami", arguments: {} }));
    expect(me.actor).toMatchObject({ external_ref: "claude-code" });
  });
});
