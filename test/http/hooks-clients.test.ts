/**
 * POST /mcp/hooks/<client> for the clients that run command hooks (relayed by `agent-ledger hook`):
 * OpenAI Codex, Gemini CLI and Cursor, each driven with its documented event JSON and answered in
 * its documented output. The findings are the ones Claude Code gets (test/http/hooks.test.ts);
 * these tests pin each client's mapping, and that nothing the ledger cannot judge blocks an agent.
 */
import { describe, expect, it } from "vitest";
import { ok, makeCtx, seedIdentity, TestClock, workerFetch } from "../support/helpers";

const CWD = "/home/dev/api";
const REPO = "acme/api";

async function team() {
  const tenant = `hookc-${crypto.randomUUID().slice(0, 8)}`;
  const clock = new TestClock(new Date());
  const aliceId = await seedIdentity(tenant, "alice");
  const bobId = await seedIdentity(tenant, "bob");
  const boss = makeCtx(await seedIdentity(tenant, "pat", { operator: true }), clock);
  const alice = makeCtx(aliceId, clock);
  await ok(alice, "repo_register", { slug: REPO });
  return { alice, boss, clock, aliceKey: aliceId.key, bobKey: bobId.key };
}

type Answer = Record<string, unknown> & { hookSpecificOutput?: Record<string, unknown> };

async function hook(client: string, key: string | null, event: unknown, query = `?repository=${REPO}`): Promise<{ status: number; body: Answer }> {
  const res = await workerFetch(`http://ledger.test/mcp/hooks/${client}${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) },
    body: typeof event === "string" ? event : JSON.stringify(event),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Answer };
}

/** Codex's common input fields (developers.openai.com/codex/hooks). */
const codexBase = (session: string, name: string) => ({ session_id: session, transcript_path: null, cwd: CWD, hook_event_name: name, model: "gpt-5", permission_mode: "default" });
/** An apply_patch call as Codex reports it: the raw patch in tool_input.command. */
const codexPatch = (name: "PreToolUse" | "PostToolUse", patch: string, session = "thr_1") => ({
  ...codexBase(session, name),
  turn_id: "turn_1",
  tool_name: "apply_patch",
  tool_use_id: "call_1",
  tool_input: { command: patch },
  ...(name === "PostToolUse" ? { tool_response: "Success. Updated the following files:\nM src/auth/login.ts" } : {}),
});
const PATCH = ["*** Begin Patch", "*** Update File: src/auth/login.ts", "@@", "-a", "+b", "*** Add File: docs/new.md", "+hello", "*** End Patch"].join("\n");

describe("POST /mcp/hooks/codex", () => {
  it("denies an apply_patch touching a file another actor reserved (never 'ask', which Codex does not honour)", async () => {
    const { alice, bobKey } = await team();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/"], reason: "login rewrite" });
    for (const query of [`?repository=${REPO}`, `?repository=${REPO}&on_reserved=ask`]) {
      const r = await hook("codex", bobKey, codexPatch("PreToolUse", PATCH), query);
      expect(r.status).toBe(200);
      expect(r.body.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
      expect(String(r.body.hookSpecificOutput!.permissionDecisionReason)).toMatch(/^src\/auth\/login\.ts is reserved by alice \(src\/auth\/\*\*, until \S+Z\): login rewrite\./);
    }
    // A patch of other files, a Bash call, and an absolute path outside the project go on.
    expect((await hook("codex", bobKey, codexPatch("PreToolUse", PATCH.replace("src/auth/login.ts", "src/app.ts")))).body).toEqual({});
    expect((await hook("codex", bobKey, { ...codexPatch("PreToolUse", PATCH), tool_name: "Bash", tool_input: { command: "rm -rf src/auth" } })).body).toEqual({});
    expect((await hook("codex", bobKey, codexPatch("PreToolUse", PATCH.replace("src/auth/login.ts", "/etc/passwd")))).body).toEqual({});
  });

  it("notes the patch's files after it ran, with their prior attempts and (log_changes=1) the change events as context; holds Stop once and tells before compaction", async () => {
    const { alice, aliceKey } = await team();
    await ok(alice, "log_change", { entity_path: "src/auth/login.ts", change_type: "add", reasoning: "cache sessions in memory" });
    await ok(alice, "log_change", { entity_path: "src/auth/login.ts", change_type: "revert", reasoning: "sessions leaked across tenants" });
    const after = await hook("codex", aliceKey, codexPatch("PostToolUse", PATCH, "thr_2"));
    expect(after.body.hookSpecificOutput).toMatchObject({ hookEventName: "PostToolUse" });
    expect(String(after.body.hookSpecificOutput!.additionalContext)).toMatch(/earlier changes to src\/auth\/login\.ts, docs\/new\.md were undone[\s\S]*add \(reverted\): cache sessions in memory/);
    const stop = { ...codexBase("thr_2", "Stop"), turn_id: "turn_2", stop_hook_active: false, last_assistant_message: "done" };
    const held = await hook("codex", aliceKey, stop);
    expect(held.body).toMatchObject({ decision: "block" });
    // One patch notes its files at one instant: either order.
    expect(String(held.body.reason)).toMatch(/you edited (src\/auth\/login\.ts, docs\/new\.md|docs\/new\.md, src\/auth\/login\.ts) in this session/);
    expect((await hook("codex", aliceKey, { ...stop, stop_hook_active: true })).body).toEqual({});
    expect(String((await hook("codex", aliceKey, { ...codexBase("thr_2", "PreCompact"), trigger: "auto" })).body.systemMessage)).toContain("docs/new.md");
    expect((await hook("codex", aliceKey, stop, `?repository=${REPO}&stop=tell`)).body).toMatchObject({ systemMessage: expect.stringContaining("docs/new.md") });

    const logged = await hook("codex", aliceKey, codexPatch("PostToolUse", PATCH, "thr_3"), `?repository=${REPO}&log_changes=1`);
    expect(String(logged.body.hookSpecificOutput!.additionalContext)).toContain("agent-ledger logged this edit of src/auth/login.ts, docs/new.md as change events.");
    expect((await hook("codex", aliceKey, { ...stop, session_id: "thr_3" })).body).toEqual({});
  });

  it("answers SessionStart (compact included) with the digest, an overseer's message first", async () => {
    const { boss, aliceKey } = await team();
    await ok(boss, "overseer_message", { to: ["alice"], message: "Freeze the schema." });
    for (const source of ["startup", "compact"]) {
      const r = await hook("codex", aliceKey, { ...codexBase("thr_4", "SessionStart"), source });
      expect(r.body.hookSpecificOutput!.hookEventName).toBe("SessionStart");
      expect(String(r.body.hookSpecificOutput!.additionalContext).split("\n")[0]).toBe("OVERSEER (read this first): Freeze the schema.");
    }
    expect((await hook("codex", aliceKey, { ...codexBase("thr_4", "UserPromptSubmit"), turn_id: "t", prompt: "hi" })).body).toEqual({});
  });

  it("goes on ({}) for a body that is not an event and for a patch with no readable file, and needs a credential", async () => {
    const { bobKey } = await team();
    for (const bad of ["not json", "[1]", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: 7 }, cwd: CWD })]) {
      const r = await hook("codex", bobKey, bad);
      expect(r.status, bad).toBe(200);
      expect(r.body, bad).toEqual({});
    }
    expect((await hook("codex", bobKey, codexPatch("PreToolUse", `*** Update File: ${"../".repeat(2000)}x`))).body).toEqual({});
    expect((await hook("codex", null, codexPatch("PreToolUse", PATCH))).status).toBe(401);
  });

  it("keeps tenants apart: another tenant's reservation and session notes are not seen", async () => {
    const { alice, aliceKey } = await team();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/"] });
    await hook("codex", aliceKey, codexPatch("PostToolUse", PATCH, "thr_shared"));
    const stranger = await team();
    expect((await hook("codex", stranger.bobKey, codexPatch("PreToolUse", PATCH))).body).toEqual({});
    expect((await hook("codex", stranger.aliceKey, { ...codexBase("thr_shared", "Stop"), turn_id: "t", stop_hook_active: false })).body).toEqual({});
  });
});

/** Gemini CLI's base input (geminicli.com/docs/hooks/reference). */
const geminiBase = (session: string, name: string) => ({ session_id: session, transcript_path: "/t.json", cwd: CWD, hook_event_name: name, timestamp: new Date().toISOString() });
const geminiTool = (name: "BeforeTool" | "AfterTool", tool: string, file: string, session = "g1") => ({
  ...geminiBase(session, name),
  tool_name: tool,
  tool_input: tool === "write_file" ? { file_path: file, content: "x" } : { file_path: file, old_string: "a", new_string: "b" },
  ...(name === "AfterTool" ? { tool_response: { llmContent: "ok", returnDisplay: "ok" } } : {}),
});

describe("POST /mcp/hooks/gemini", () => {
  it("denies write_file and replace on a reserved file (absolute or relative to the cwd) with a reason for the agent", async () => {
    const { alice, bobKey } = await team();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/"], reason: "login rewrite" });
    for (const [tool, file] of [
      ["replace", `${CWD}/src/auth/login.ts`],
      ["write_file", "src/auth/new.ts"],
    ]) {
      const r = await hook("gemini", bobKey, geminiTool("BeforeTool", tool!, file!), `?repository=${REPO}&on_reserved=ask`);
      expect(r.body, tool).toMatchObject({ decision: "deny" });
      expect(String(r.body.reason)).toMatch(/^src\/auth\/(login|new)\.ts is reserved by alice/);
    }
    expect((await hook("gemini", bobKey, geminiTool("BeforeTool", "read_file", `${CWD}/src/auth/login.ts`))).body).toEqual({});
    expect((await hook("gemini", bobKey, geminiTool("BeforeTool", "replace", "../other/src/auth/login.ts"))).body).toEqual({});
  });

  it("notes edits after the tool with prior attempts as context; AfterAgent retries once; PreCompress tells; SessionStart gives the digest", async () => {
    const { alice, aliceKey } = await team();
    await ok(alice, "log_change", { entity_path: "src/cart.ts", change_type: "add", reasoning: "round totals down" });
    await ok(alice, "log_change", { entity_path: "src/cart.ts", change_type: "revert", reasoning: "undercharged" });
    const after = await hook("gemini", aliceKey, geminiTool("AfterTool", "replace", `${CWD}/src/cart.ts`));
    expect(after.body.hookSpecificOutput).toMatchObject({ hookEventName: "AfterTool" });
    expect(String(after.body.hookSpecificOutput!.additionalContext)).toMatch(/earlier changes to src\/cart\.ts were undone[\s\S]*add \(reverted\): round totals down/);
    const turnEnd = { ...geminiBase("g1", "AfterAgent"), prompt: "fix it", prompt_response: "done", stop_hook_active: false };
    const held = await hook("gemini", aliceKey, turnEnd);
    expect(held.body).toMatchObject({ decision: "deny" });
    expect(String(held.body.reason)).toContain("you edited src/cart.ts in this session");
    expect((await hook("gemini", aliceKey, { ...turnEnd, stop_hook_active: true })).body).toEqual({});
    expect(String((await hook("gemini", aliceKey, { ...geminiBase("g1", "PreCompress"), trigger: "auto" })).body.systemMessage)).toContain("src/cart.ts");
    const start = await hook("gemini", aliceKey, { ...geminiBase("g2", "SessionStart"), source: "startup" });
    expect(start.body.hookSpecificOutput).toMatchObject({ hookEventName: "SessionStart", additionalContext: expect.stringContaining("you are alice") });
    expect((await hook("gemini", aliceKey, { ...geminiBase("g2", "BeforeModel"), llm_request: {} })).body).toEqual({});
  });

  it("keeps tenants apart", async () => {
    const { alice } = await team();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/"] });
    const stranger = await team();
    expect((await hook("gemini", stranger.bobKey, geminiTool("BeforeTool", "replace", `${CWD}/src/a.ts`))).body).toEqual({});
  });
});

/** Cursor's common input (cursor.com/docs/hooks). */
const cursorBase = (conversation: string, name: string) => ({
  conversation_id: conversation,
  generation_id: "gen-1",
  model: "auto",
  hook_event_name: name,
  cursor_version: "2.4.0",
  workspace_roots: ["/home/dev/web", CWD],
  user_email: null,
  transcript_path: null,
});

describe("POST /mcp/hooks/cursor", () => {
  it("gives the digest at sessionStart, notes afterFileEdit under a workspace root, asks for a follow-up at stop once, tells before compaction", async () => {
    const { boss, aliceKey } = await team();
    await ok(boss, "overseer_message", { to: ["alice"], message: "Ship nothing today." });
    const start = await hook("cursor", aliceKey, { ...cursorBase("c1", "sessionStart"), session_id: "c1", is_background_agent: false, composer_mode: "agent" });
    expect(String(start.body.additional_context).split("\n")[0]).toBe("OVERSEER (read this first): Ship nothing today.");
    const edit = { ...cursorBase("c1", "afterFileEdit"), file_path: `${CWD}/src/a.ts`, edits: [{ old_string: "a", new_string: "b" }] };
    expect((await hook("cursor", aliceKey, edit)).body).toEqual({});
    const stop = { ...cursorBase("c1", "stop"), status: "completed", loop_count: 0 };
    expect(String((await hook("cursor", aliceKey, stop)).body.followup_message)).toContain("you edited src/a.ts in this session");
    // A follow-up already sent, an aborted run, stop=tell: nothing more.
    expect((await hook("cursor", aliceKey, { ...stop, loop_count: 1 })).body).toEqual({});
    expect((await hook("cursor", aliceKey, { ...stop, status: "aborted" })).body).toEqual({});
    expect((await hook("cursor", aliceKey, stop, `?repository=${REPO}&stop=tell`)).body).toEqual({});
    expect(String((await hook("cursor", aliceKey, { ...cursorBase("c1", "preCompact"), trigger: "auto" })).body.user_message)).toContain("src/a.ts");
    // Another conversation owes nothing.
    expect((await hook("cursor", aliceKey, { ...stop, conversation_id: "c2" })).body).toEqual({});
  });

  it("ignores edits outside every workspace root and events it does not handle", async () => {
    const { aliceKey } = await team();
    await hook("cursor", aliceKey, { ...cursorBase("c3", "afterFileEdit"), file_path: "/etc/hosts", edits: [] });
    await hook("cursor", aliceKey, { ...cursorBase("c3", "afterFileEdit"), file_path: `${CWD}/x.ts`, workspace_roots: "not a list" });
    expect((await hook("cursor", aliceKey, { ...cursorBase("c3", "stop"), status: "completed", loop_count: 0 })).body).toEqual({});
    expect((await hook("cursor", aliceKey, { ...cursorBase("c3", "beforeShellExecution"), command: "rm -rf /", cwd: CWD })).body).toEqual({});
  });

  it("keeps tenants apart: a stranger's stop owes nothing for another tenant's conversation", async () => {
    const { aliceKey } = await team();
    await hook("cursor", aliceKey, { ...cursorBase("c-shared", "afterFileEdit"), file_path: `${CWD}/src/a.ts`, edits: [] });
    const stranger = await team();
    expect((await hook("cursor", stranger.aliceKey, { ...cursorBase("c-shared", "stop"), status: "completed", loop_count: 0 })).body).toEqual({});
  });
});

describe("POST /mcp/hooks/<unknown>", () => {
  it("answers 404 naming the hook endpoints there are", async () => {
    const { aliceKey } = await team();
    const r = await hook("windsurf", aliceKey, { hook_event_name: "x" });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(JSON.stringify(r.body)).toContain("/mcp/hooks/codex");
    expect((await hook("__proto__", aliceKey, {})).status).toBe(404);
  });
});
