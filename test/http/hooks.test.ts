/**
 * POST /mcp/hooks/claude-code: Claude Code's http hooks answered by the server, with the client's
 * documented event JSON and output format. An edit of a path someone else reserved is denied (or
 * asked); prior attempts on the file come back as context; the session's digest leads with an
 * overseer's message; nothing the ledger cannot judge ever blocks the agent.
 */
import { describe, expect, it } from "vitest";
import { makeCtx, ok, seedIdentity, TestClock, workerFetch } from "../support/helpers";

const CWD = "/home/dev/api";
const REPO = "acme/api";

async function team() {
  const tenant = `hooks-${crypto.randomUUID().slice(0, 8)}`;
  // The hook runs on the real clock: leases are made on it too.
  const clock = new TestClock(new Date());
  const aliceId = await seedIdentity(tenant, "alice");
  const bobId = await seedIdentity(tenant, "bob");
  const boss = makeCtx(await seedIdentity(tenant, "pat", { operator: true }), clock);
  const alice = makeCtx(aliceId, clock);
  const bob = makeCtx(bobId, clock);
  await ok(alice, "repo_register", { slug: REPO });
  return { alice, bob, boss, clock, aliceKey: aliceId.key, bobKey: bobId.key };
}

type Answer = { hookSpecificOutput?: { hookEventName: string; permissionDecision?: string; permissionDecisionReason?: string; additionalContext?: string } };

async function hook(key: string | null, event: unknown, query = `?repository=${REPO}`): Promise<{ status: number; body: Answer }> {
  const res = await workerFetch(`http://ledger.test/mcp/hooks/claude-code${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) },
    body: typeof event === "string" ? event : JSON.stringify(event),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Answer };
}

/** Claude Code's PreToolUse event for an Edit, as its hooks reference documents it. */
const editEvent = (file: string, tool = "Edit") => ({
  session_id: "abc123",
  transcript_path: "/home/dev/.claude/projects/api/abc123.jsonl",
  cwd: CWD,
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: tool,
  tool_input: { file_path: file, old_string: "a", new_string: "b" },
  tool_use_id: "toolu_01",
});

describe("POST /mcp/hooks/claude-code: PreToolUse", () => {
  it("denies an edit of a path another actor reserved, naming the holder, the glob and the lease; asks instead where the team says so", async () => {
    const { alice, bobKey, aliceKey } = await team();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/"], reason: "login rewrite" });
    const denied = await hook(bobKey, editEvent(`${CWD}/src/auth/login.ts`));
    expect(denied.status).toBe(200);
    expect(denied.body.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(denied.body.hookSpecificOutput!.permissionDecisionReason).toMatch(/^src\/auth\/login\.ts is reserved by alice \(src\/auth\/\*\*, until \d{4}-\d\d-\d\dT[\d:.]+Z\): login rewrite\./);
    const asked = await hook(bobKey, editEvent(`${CWD}/src/auth/login.ts`, "Write"), `?repository=${REPO}&on_reserved=ask`);
    expect(asked.body.hookSpecificOutput!.permissionDecision).toBe("ask");
    // The holder edits its own paths, and nobody's hold covers src/app.ts.
    expect((await hook(aliceKey, editEvent(`${CWD}/src/auth/login.ts`))).body).toEqual({});
    expect((await hook(bobKey, editEvent(`${CWD}/src/app.ts`))).body).toEqual({});
  });

  it("denies an edit of a file another actor's claimed task covers (its code refs' linked paths), until the claim ends", async () => {
    const { alice, bobKey, aliceKey } = await team();
    await ok(alice, "project_create", { title: "API", key: "API" });
    const task = (await ok(alice, "task_create", { project_id: "API", title: "Rewrite billing" })).task as { id: string };
    await ok(alice, "task_claim", { task_id: task.id });
    await ok(alice, "code_ref_add", { object_type: "task", object_id: task.id, ref_type: "branch", repository_id: REPO, branch: "billing", paths: ["src/billing/"] });
    const denied = await hook(bobKey, editEvent(`${CWD}/src/billing/invoice.ts`));
    expect(denied.body.hookSpecificOutput!.permissionDecision).toBe("deny");
    expect(denied.body.hookSpecificOutput!.permissionDecisionReason).toMatch(
      /^src\/billing\/invoice\.ts belongs to API-1 \(Rewrite billing\), claimed by alice until \S+Z \(its code covers src\/billing\/\*\*\)/,
    );
    // The claimer's own edits, and files outside the task's paths, go on; a released task holds nothing.
    expect((await hook(aliceKey, editEvent(`${CWD}/src/billing/invoice.ts`))).body).toEqual({});
    expect((await hook(bobKey, editEvent(`${CWD}/src/auth/x.ts`))).body).toEqual({});
    await ok(alice, "task_release", { task_id: task.id });
    expect((await hook(bobKey, editEvent(`${CWD}/src/billing/invoice.ts`))).body).toEqual({});
  });

  it("gives the prior attempts on the file that were reverted, as context for the agent", async () => {
    const { alice, bobKey } = await team();
    await ok(alice, "log_change", { entity_path: "src/cart.ts", change_type: "add", reasoning: "round totals down" });
    await ok(alice, "log_change", { entity_path: "src/cart.ts", change_type: "revert", reasoning: "customers were undercharged" });
    const r = await hook(bobKey, editEvent(`${CWD}/src/cart.ts`, "MultiEdit"));
    expect(r.body.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse" });
    expect(r.body.hookSpecificOutput!.permissionDecision).toBeUndefined();
    expect(r.body.hookSpecificOutput!.additionalContext).toContain("earlier changes to src/cart.ts were undone");
    expect(r.body.hookSpecificOutput!.additionalContext).toMatch(/add \(reverted\): round totals down/);
  });

  it("goes on ({}) for other tools, files outside the project, an unregistered repository, another tenant's reservation and a body that is not an event", async () => {
    const { alice, bobKey } = await team();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/"] });
    expect((await hook(bobKey, { ...editEvent(`${CWD}/src/a.ts`), tool_name: "Bash", tool_input: { command: "rm -rf src" } })).body).toEqual({});
    expect((await hook(bobKey, editEvent("/etc/passwd"))).body).toEqual({});
    expect((await hook(bobKey, editEvent(`${CWD}/../other/src/a.ts`))).body).toEqual({});
    expect((await hook(bobKey, editEvent(`${CWD}/src/a.ts`), "?repository=acme/unknown")).body).toEqual({});
    expect((await hook(bobKey, editEvent(`${CWD}/src/a.ts`), "")).body).toEqual({});
    // A cwd with trailing slashes is the same project; one that is only a long run of slashes is no project.
    expect((await hook(bobKey, { ...editEvent(`${CWD}/src/a.ts`), cwd: `${CWD}///` })).body.hookSpecificOutput!.permissionDecision).toBe("deny");
    expect((await hook(bobKey, { ...editEvent(`${CWD}/src/a.ts`), cwd: `${"/".repeat(4000)}x` })).body).toEqual({});
    const stranger = await team();
    expect((await hook(stranger.bobKey, editEvent(`${CWD}/src/a.ts`))).body).toEqual({});
    for (const bad of ["not json", "[1,2]", "null", JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: "x", cwd: 5 })]) {
      const r = await hook(bobKey, bad);
      expect(r.status, bad).toBe(200);
      expect(r.body, bad).toEqual({});
    }
  });

  it("refuses a request without a credential (the client reports it and goes on)", async () => {
    const r = await hook(null, editEvent(`${CWD}/src/a.ts`));
    expect(r.status).toBe(401);
    const revoked = await hook("alk_not_a_key", editEvent(`${CWD}/src/a.ts`));
    expect(revoked.status).toBe(401);
  });
});

describe("POST /mcp/hooks/claude-code: SessionStart", () => {
  it("answers the caller's digest as context, an overseer's message first", async () => {
    const { alice, boss, aliceKey } = await team();
    await ok(alice, "project_create", { title: "API", key: "API" });
    const task = (await ok(alice, "task_create", { project_id: "API", title: "Rewrite login" })).task as { id: string };
    await ok(alice, "task_claim", { task_id: task.id });
    await ok(boss, "overseer_message", { to: ["alice"], message: "Stop: the schema is frozen until Monday." });
    const r = await hook(aliceKey, { session_id: "s1", transcript_path: "/t.jsonl", cwd: CWD, hook_event_name: "SessionStart", source: "startup" });
    const text = r.body.hookSpecificOutput!.additionalContext!;
    expect(r.body.hookSpecificOutput!.hookEventName).toBe("SessionStart");
    expect(text.split("\n")[0]).toBe("OVERSEER (read this first): Stop: the schema is frozen until Monday.");
    expect(text).toContain("you are alice");
    expect(text).toMatch(/- API-1 Rewrite login \(in_progress, lease until \S+Z\)/);
    const compacted = await hook(aliceKey, { session_id: "s1", cwd: CWD, hook_event_name: "PostCompact" });
    expect(compacted.body.hookSpecificOutput!.hookEventName).toBe("PostCompact");
    // Events it has nothing to say on: go on.
    expect((await hook(aliceKey, { session_id: "s1", cwd: CWD, hook_event_name: "Notification", message: "hi" })).body).toEqual({});
  });
});

describe("POST /mcp/hooks/claude-code: PostToolUse, PreCompact and Stop", () => {
  const after = (file: string, session = "s-edit", tool = "Edit") => ({ ...editEvent(file, tool), session_id: session, hook_event_name: "PostToolUse", tool_response: { success: true } });
  const stop = (session = "s-edit", active = false) => ({ session_id: session, transcript_path: "/t.jsonl", cwd: CWD, hook_event_name: "Stop", stop_hook_active: active });

  it("reminds the agent of the files it edited in this session and did not log: once at Stop (held), and told before compaction", async () => {
    const { alice, aliceKey, bobKey, clock } = await team();
    expect((await hook(aliceKey, after(`${CWD}/src/a.ts`))).body).toEqual({});
    expect((await hook(aliceKey, after(`${CWD}/src/b.ts`, "s-edit", "Write"))).body).toEqual({});
    const held = await hook(aliceKey, stop());
    expect(held.body).toMatchObject({ decision: "block" });
    expect((held.body as { reason: string }).reason).toContain("you edited src/a.ts, src/b.ts in this session and logged no change for them");
    // The agent went on once already: not held again.
    expect((await hook(aliceKey, stop("s-edit", true))).body).toEqual({});
    const compact = await hook(aliceKey, { session_id: "s-edit", cwd: CWD, hook_event_name: "PreCompact", trigger: "auto" });
    expect((compact.body as { systemMessage: string }).systemMessage).toContain("src/a.ts, src/b.ts");
    // Logged (after the edits): no longer owed. Another session, another actor: nothing to remind.
    clock.advance(60_000);
    await ok(alice, "log_change", { entity_path: "src/a.ts", change_type: "modify", reasoning: "split the parser" });
    expect(((await hook(aliceKey, stop())).body as { reason: string }).reason).toContain("you edited src/b.ts in this session");
    await ok(alice, "log_change", { entity_path: "src/b.ts", change_type: "add", reasoning: "new module" });
    expect((await hook(aliceKey, stop())).body).toEqual({});
    expect((await hook(aliceKey, stop("s-other"))).body).toEqual({});
    expect((await hook(bobKey, stop())).body).toEqual({});
    // stop=tell only tells.
    await hook(aliceKey, after(`${CWD}/src/c.ts`));
    expect((await hook(aliceKey, stop(), `?repository=${REPO}&stop=tell`)).body).toMatchObject({ systemMessage: expect.stringContaining("src/c.ts") });
  });

  it("logs each edit as a change event where the team turns it on (log_changes=1)", async () => {
    const { alice, aliceKey } = await team();
    const r = await hook(aliceKey, after(`${CWD}/src/billing.ts`, "s-log", "Write"), `?repository=${REPO}&log_changes=1`);
    expect(r.body.hookSpecificOutput).toMatchObject({ hookEventName: "PostToolUse", additionalContext: "agent-ledger logged this edit of src/billing.ts as a change event." });
    const history = (await ok(alice, "change_history", { entity_path: "src/billing.ts" })) as { items?: { change_type: string }[]; events?: { change_type: string }[] };
    expect((history.items ?? history.events ?? []).map((e) => e.change_type)).toEqual(["add"]);
    expect((await hook(aliceKey, stop("s-log"))).body).toEqual({});
  });
});
