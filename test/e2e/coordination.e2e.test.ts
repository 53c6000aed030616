/**
 * Failures pushed to whoever holds the work, end to end in `wrangler dev`: a signed check_run failure
 * on a claimed task's branch reaches the claim holder's inbox and the holder's outgoing webhook (a
 * receiver on loopback here, allowed by the development-only OUTBOUND_HOOKS_ALLOW_PRIVATE), whose
 * signature the receiver verifies with the secret webhook_subscribe answered.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { serveFetch, type LoopbackServer } from "./support/github-server";

type S = Record<string, unknown> & { ok: boolean };
const SECRET = "e2e-webhook-secret";
const REPO = "acme/e2e-coordination";

interface Received {
  headers: Headers;
  body: string;
}

async function connect(key: string, toolsets = "coordination,projects,tasks,repos,collab", headers: Record<string, string> = {}): Promise<(name: string, args: Record<string, unknown>) => Promise<S>> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=${toolsets}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}`, ...headers } },
  });
  const client = new Client({ name: "e2e-coordination", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return async (name, args) => (await client.callTool({ name, arguments: args })).structuredContent as S;
}
const clients: Client[] = [];

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("coordination over HTTP (wrangler dev)", () => {
  let receiver: LoopbackServer;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = await serveFetch(async (req) => {
      received.push({ headers: req.headers, body: await req.text() });
      return new Response("thanks", { status: 200 });
    });
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    await receiver?.close();
  });

  it("a signed check_run failure reaches the claim holder's inbox and their outgoing webhook, signed", async () => {
    const holder = await connect(inject("raceKeys")[1]!);
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await holder(name, args);
      expect(r.ok, `${name}: ${JSON.stringify(r)}`).toBe(true);
      return r;
    };
    await call("repo_register", { slug: REPO });
    await call("project_create", { title: "Coordination", key: "COORD" });
    const task = (await call("task_create", { project_id: "COORD", title: "Fix the login check" })).task as { id: string; ref: string };
    await call("task_claim", { task_id: task.id });
    await call("code_ref_add", { object_type: "task", object_id: task.id, ref_type: "branch", repository_id: REPO, branch: "feature/coord-login" });
    const sub = await call("webhook_subscribe", { url: `${receiver.url}/hook`, kinds: ["check.failed"] });
    const secret = sub.secret as string;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);

    const sha = "c0ffee0000000000000000000000000000000001";
    const body = JSON.stringify({
      action: "completed",
      repository: { full_name: REPO, html_url: `https://github.com/${REPO}` },
      check_run: {
        id: 424242,
        name: "unit-tests",
        status: "completed",
        conclusion: "failure",
        head_sha: sha,
        html_url: `https://github.com/${REPO}/runs/424242`,
        check_suite: { id: 1, head_branch: "feature/coord-login" },
        pull_requests: [],
      },
    });
    const delivered = await fetch(`${inject("baseUrl")}/webhooks/github/e2e-a`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-GitHub-Event": "check_run", "X-GitHub-Delivery": crypto.randomUUID(), "X-Hub-Signature-256": await sign(SECRET, body) },
      body,
    });
    expect(delivered.status).toBe(202);

    const notice = await until("the holder's notice", async () => {
      const items = ((await holder("notification_query", {})).items ?? []) as { kind: string; summary: string; object_id: string }[];
      return items.find((n) => n.kind === "check.failed");
    });
    expect(notice.object_id).toBe(task.id);
    expect(notice.summary).toContain('Check "unit-tests" failure');
    expect(notice.summary).toContain(`https://github.com/${REPO}/runs/424242`);

    const post = await until("the outgoing webhook", async () => received.find((r) => r.headers.get("x-ledger-event") === "check.failed"));
    const expected = `sha256=${createHmac("sha256", secret).update(post.body).digest("hex")}`;
    const got = post.headers.get("x-ledger-signature-256") ?? "";
    expect(got.length).toBe(expected.length);
    expect(timingSafeEqual(Buffer.from(got), Buffer.from(expected))).toBe(true);
    const payload = JSON.parse(post.body) as { kind: string; object_id: string; summary: string };
    expect(payload).toMatchObject({ kind: "check.failed", object_id: task.id, summary: notice.summary });
    // The delivery log says so too.
    const log = await until("the delivery log", async () => {
      const items = ((await holder("webhook_deliveries", {})).items ?? []) as { status: string }[];
      return items.find((d) => d.status === "delivered");
    });
    expect(log.status).toBe("delivered");
  });

  it("a push to the default branch marks a note linked to the changed path stale; confirming it clears the mark", async () => {
    const writer = await connect(inject("raceKeys")[2]!, "knowledge,repos");
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await writer(name, args);
      expect(r.ok, `${name}: ${JSON.stringify(r).slice(0, 400)}`).toBe(true);
      return r;
    };
    const repo = "acme/e2e-memory";
    await call("repo_register", { slug: repo });
    const note = (await call("knowledge_write", { title: "How sessions expire", body: "Sessions end after 24h idle (src/session.ts).", kind: "note", paths: [`${repo}:src/session.ts`] })).note as {
      id: string;
      stale: unknown;
    };
    expect(note.stale).toBeNull();

    const sha = "5e55101000000000000000000000000000000002";
    const body = JSON.stringify({
      ref: "refs/heads/main",
      after: sha,
      repository: { full_name: repo, html_url: `https://github.com/${repo}`, default_branch: "main" },
      pusher: { name: "someone" },
      commits: [{ id: sha, message: "sessions: 12h", timestamp: new Date().toISOString(), author: { name: "Someone", email: "s@example.com" }, added: [], modified: ["src/session.ts"], removed: [] }],
    });
    const delivered = await fetch(`${inject("baseUrl")}/webhooks/github/e2e-a`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-GitHub-Event": "push", "X-GitHub-Delivery": crypto.randomUUID(), "X-Hub-Signature-256": await sign(SECRET, body) },
      body,
    });
    expect(delivered.status).toBe(202);

    const stale = await until("the stale mark", async () => {
      const items = ((await call("knowledge_search", { q: "sessions expire", lexical_only: true })).items ?? []) as { id: string; stale: { commit: string; path: string } | null }[];
      return items.find((n) => n.id === note.id && n.stale !== null)?.stale ?? undefined;
    });
    expect(stale).toMatchObject({ commit: sha, path: "src/session.ts" });
    const confirmed = (await call("knowledge_update", { note_id: note.id, still_holds: true })).note as { stale: unknown };
    expect(confirmed.stale).toBeNull();
  });

  it("answers Claude Code's http hooks: an edit of a path another agent reserved is denied, and the session starts with its digest", async () => {
    const holder = await connect(inject("raceKeys")[3]!, "coordination,repos");
    const repo = "acme/e2e-hooks";
    expect((await holder("repo_register", { slug: repo })).ok).toBe(true);
    expect((await holder("path_reserve", { repository_id: repo, paths: ["src/billing/"], reason: "invoice rewrite" })).reserved).toBe(true);
    const post = async (key: string, event: unknown) => {
      const res = await fetch(`${inject("baseUrl")}/mcp/hooks/claude-code?repository=${repo}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify(event),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { hookSpecificOutput?: Record<string, string> };
    };
    const edit = {
      session_id: "e2e",
      transcript_path: "/t.jsonl",
      cwd: "/work/billing",
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: { file_path: "/work/billing/src/billing/invoice.ts", old_string: "a", new_string: "b" },
    };
    const denied = await post(inject("keyA"), edit);
    expect(denied.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(denied.hookSpecificOutput!.permissionDecisionReason).toContain("src/billing/invoice.ts is reserved by racer-4 (src/billing/**");
    // The holder's own edit goes on.
    expect(await post(inject("raceKeys")[3]!, edit)).toEqual({});
    const start = await post(inject("keyA"), { session_id: "e2e", cwd: "/work/billing", hook_event_name: "SessionStart", source: "startup" });
    expect(start.hookSpecificOutput).toMatchObject({ hookEventName: "SessionStart" });
    expect(start.hookSpecificOutput!.additionalContext).toContain("you are claude-code");
  });

  it("answers Codex's, Gemini CLI's and Cursor's hooks in their own formats: a reserved file's edit denied, the digest at session start", async () => {
    const holder = await connect(inject("raceKeys")[2]!, "coordination,repos");
    const repo = "acme/e2e-client-hooks";
    expect((await holder("repo_register", { slug: repo })).ok).toBe(true);
    expect((await holder("path_reserve", { repository_id: repo, paths: ["src/billing/"], reason: "invoice rewrite" })).reserved).toBe(true);
    const post = async (client: string, event: unknown) => {
      const res = await fetch(`${inject("baseUrl")}/mcp/hooks/${client}?repository=${repo}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${inject("keyA")}` },
        body: JSON.stringify(event),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown> & { hookSpecificOutput?: Record<string, string> };
    };
    const cwd = "/work/billing";
    // Codex: apply_patch's own patch text names the files.
    const patch = ["*** Begin Patch", "*** Update File: src/billing/invoice.ts", "@@", "-a", "+b", "*** End Patch"].join("\n");
    const codex = await post("codex", {
      session_id: "thr_e2e",
      transcript_path: null,
      cwd,
      hook_event_name: "PreToolUse",
      model: "gpt-5",
      permission_mode: "default",
      turn_id: "turn_1",
      tool_name: "apply_patch",
      tool_use_id: "call_1",
      tool_input: { command: patch },
    });
    expect(codex.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(codex.hookSpecificOutput!.permissionDecisionReason).toContain("src/billing/invoice.ts is reserved by racer-3");
    // Gemini CLI: BeforeTool on replace, a path relative to the cwd.
    const gemini = await post("gemini", {
      session_id: "g_e2e",
      transcript_path: "/t.json",
      cwd,
      hook_event_name: "BeforeTool",
      timestamp: new Date().toISOString(),
      tool_name: "replace",
      tool_input: { file_path: "src/billing/invoice.ts", old_string: "a", new_string: "b" },
    });
    expect(gemini).toMatchObject({ decision: "deny" });
    expect(String(gemini.reason)).toContain("src/billing/invoice.ts is reserved by racer-3");
    // Cursor: the digest at sessionStart.
    const cursor = await post("cursor", {
      conversation_id: "c_e2e",
      session_id: "c_e2e",
      generation_id: "gen-1",
      model: "auto",
      hook_event_name: "sessionStart",
      cursor_version: "2.4.0",
      workspace_roots: [cwd],
      user_email: null,
      transcript_path: null,
      is_background_agent: false,
      composer_mode: "agent",
    });
    expect(String(cursor.additional_context)).toContain("you are claude-code");
  });

  it("puts a hook's logged edit on the run of the MCP session that sent the same client session id", async () => {
    const key = inject("raceKeys")[3]!;
    const client = `e2e-${crypto.randomUUID()}`;
    const agent = await connect(key, "changes,runs,collab", { "X-Claude-Code-Session-Id": client });
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await agent(name, args);
      expect(r.ok, `${name}: ${JSON.stringify(r).slice(0, 400)}`).toBe(true);
      return r;
    };
    await call("log_change", { entity_path: "src/e2e-session/tool.ts", change_type: "modify", reasoning: "the agent's own tool call" });
    const run = (await call("run_summary", {})).run as { run_key: string; session_id: string };
    const res = await fetch(`${inject("baseUrl")}/mcp/hooks/claude-code?log_changes=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({
        session_id: client,
        transcript_path: "/t.jsonl",
        cwd: "/work/app",
        hook_event_name: "PostToolUse",
        tool_name: "Write",
        tool_input: { file_path: "/work/app/src/e2e-session/hook.ts", content: "x" },
        tool_response: { success: true },
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext).toContain("logged this edit of src/e2e-session/hook.ts");
    const logged = ((await call("activity_query", { run_id: run.run_key, verb: "change.logged" })).items ?? []) as { session_id: string; metadata: { entity_path?: string } }[];
    expect(logged.map((a) => a.metadata.entity_path).sort()).toEqual(["src/e2e-session/hook.ts", "src/e2e-session/tool.ts"]);
    expect(new Set(logged.map((a) => a.session_id))).toEqual(new Set([run.session_id]));
  });
});
