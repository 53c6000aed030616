/**
 * The runs room of the work ledger (seed 001): the session's run minted lazily by its first write
 * (over real MCP sessions, and through the registry with test/run-helpers.ts), write attribution
 * in activity.run_id, run_fork / run_heartbeat / run_end / run_query / run_get / run_summary, the
 * run reaper, the run-context defaults of code refs, and tenant isolation.
 *
 * Time: registry-level tests use a clock at T0 (2030); the HTTP tests run on the real clock.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runMaintenance } from "../../src/cron/maintenance";
import type { Env } from "../../src/env";
import type { Ctx } from "../../src/core/context";
import { runKeyFor, RUN_KEY } from "../../src/work/runs/model";
import { call, connectClient, count, fails, MINUTE, newWorld, ok, refusedWithoutWrites, seedIdentity, workerFetch, type Structured, type World } from "../support/helpers";
import { inSession } from "../support/run-helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const HOUR = 60 * MINUTE;
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SHA = "A1B2C3D4E5F60718293A4B5C6D7E8F9012345678";

const world = (name: string): Promise<World> => newWorld(`wrun-${name}`, { start: T0 });

async function runRows(tenantId: string): Promise<Structured[]> {
  return (await env.DB.prepare("SELECT * FROM runs WHERE tenant_id = ? ORDER BY seq").bind(tenantId).all<Structured>()).results;
}

async function activityRows(tenantId: string): Promise<Structured[]> {
  return (await env.DB.prepare("SELECT verb, run_id, session_id FROM activity WHERE tenant_id = ? ORDER BY seq").bind(tenantId).all<Structured>()).results;
}

/** Everything the run tools write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  return {
    runs: (await runRows(tenantId)).map((r) => `${r.id}:${r.status}:${r.last_heartbeat_at}:${r.head_sha}:${r.counts}:${r.ended_at}`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
  };
}

const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

/** A ctx whose writes are attributed to `runId`, as an out-of-process child's would be. */
const attributedTo = (ctx: Ctx, runId: string): Ctx => ({ ...ctx, ensureRun: async () => runId, currentRun: async () => runId });

// ---------------------------------------------------------------------------------------------

describe("run keys", () => {
  it("are run- and eight Crockford base32 characters, derived from the id", () => {
    const id = "01890a5d-ac96-774b-bcce-b302099a8057";
    expect(runKeyFor(id)).toMatch(RUN_KEY);
    expect(runKeyFor(id)).toBe(runKeyFor(id));
    expect(runKeyFor("01890a5d-ac96-774b-bcce-000000000000")).toBe("run-00000000");
    expect(runKeyFor("01890a5d-ac96-774b-bcce-00ffffffffff")).toBe("run-zzzzzzzz");
  });
});

describe("the session's run over MCP", () => {
  it("is minted by the first write only, reused by later writes, and named on their activity", async () => {
    const id = await seedIdentity(`wrun-http-${crypto.randomUUID().slice(0, 8)}`, "claude-code");
    const { client, transport } = await connectClient(id.key, "/mcp?toolsets=all");
    const callOk = async (name: string, args: Record<string, unknown>) => {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, `${name}: ${JSON.stringify(r.structuredContent)}`).toBeFalsy();
      return r.structuredContent as Structured;
    };

    await callOk("run_query", {});
    await callOk("project_query", {});
    await callOk("actor_query", {});
    expect(await runRows(id.tenantId)).toEqual([]);
    const none = await client.callTool({ name: "run_summary", arguments: {} });
    expect(none.structuredContent).toMatchObject({ ok: false, error: { code: "no_current_run" } });

    await callOk("project_create", { title: "Runs over HTTP", key: "RH" });
    const [run] = await runRows(id.tenantId);
    expect(run).toMatchObject({
      kind: "session",
      status: "running",
      actor_id: id.actorId,
      session_id: transport.sessionId,
      parent_run_id: null,
      root_run_id: run!.id,
      label: "vitest",
      run_series_key: null,
      counts: "{}",
      ended_at: null,
    });
    expect(run!.id).toMatch(UUID_V7);
    expect(run!.run_key).toBe(runKeyFor(run!.id as string));

    await callOk("task_create", { project_id: "RH", title: "first" });
    await callOk("task_claim", { project_id: "RH" });
    await callOk("decision_log", { title: "Store", choice: "D1", project_id: "RH" });
    expect(await runRows(id.tenantId)).toHaveLength(1);
    const activity = await activityRows(id.tenantId);
    expect(activity.map((a) => a.verb)).toEqual(["project.created", "task.created", "task.claimed", "decision.logged"]);
    expect(activity.every((a) => a.run_id === run!.id && a.session_id === transport.sessionId)).toBe(true);

    const summary = await callOk("run_summary", {});
    expect(summary).toMatchObject({ run: { id: run!.id }, tasks_created: 1, decisions_logged: 1, activity_total: 4 });
    expect((await callOk("run_get", { run_key: run!.run_key })).run).toMatchObject({ id: run!.id, status: "running" });

    // Ending the session's run: the next write starts a fresh one.
    const ended = await callOk("run_end", { status: "succeeded", counts: { tasks_created: 1 } });
    expect(ended).toMatchObject({ run: { id: run!.id, status: "succeeded", counts: { tasks_created: 1 } }, session_run_released: true });
    const afterEnd = await client.callTool({ name: "run_summary", arguments: {} });
    expect(afterEnd.structuredContent).toMatchObject({ ok: false, error: { code: "no_current_run" } });
    await callOk("task_create", { project_id: "RH", title: "second" });
    const runs = await runRows(id.tenantId);
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatchObject({ kind: "session", status: "running", session_id: transport.sessionId });
    expect(runs[1]!.id).not.toBe(run!.id);
    const last = (await activityRows(id.tenantId)).at(-1)!;
    expect(last).toMatchObject({ verb: "task.created", run_id: runs[1]!.id });
    // run_end's own row went to the run it ended, which was current when it was written.
    expect((await activityRows(id.tenantId)).find((a) => a.verb === "run.succeeded")).toMatchObject({ run_id: run!.id });

    await transport.terminateSession();
    await client.close();
  });

  it("mints nothing for calls without a session, and tags a series from X-Run-Series-Key", async () => {
    const id = await seedIdentity(`wrun-nosess-${crypto.randomUUID().slice(0, 8)}`, "agent");
    const headers = (extra: Record<string, string> = {}) => ({
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      Authorization: `Bearer ${id.key}`,
      ...extra,
    });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "project_create", arguments: { title: "No session", key: "NS" } } });
    const res = await workerFetch("http://ledger.test/mcp", { method: "POST", headers: headers(), body });
    expect(((await res.json()) as { result: { structuredContent: Structured } }).result.structuredContent.ok).toBe(true);
    expect(await runRows(id.tenantId)).toEqual([]);
    expect(await activityRows(id.tenantId)).toEqual([{ verb: "project.created", run_id: null, session_id: "" }]);

    const bad = await workerFetch("http://ledger.test/mcp", { method: "POST", headers: headers({ "X-Run-Series-Key": "bad key!" }), body });
    expect(bad.status).toBe(400);

    const { client } = await connectClient(id.key, "/mcp?toolsets=all&run_series_key=nightly-triage");
    await client.callTool({ name: "task_create", arguments: { project_id: "NS", title: "tick" } });
    const [run] = await runRows(id.tenantId);
    expect(run).toMatchObject({ kind: "session", run_series_key: "nightly-triage" });
    const series = await client.callTool({ name: "run_query", arguments: { run_series_key: "nightly-triage" } });
    expect((series.structuredContent as Structured).items.map((r: Structured) => r.id)).toEqual([run!.id]);
    await client.close();
  });
});

describe("the session's run through the registry", () => {
  it("refreshes the run's heartbeat on writes at most once a minute, and replaces a run that ended elsewhere", async () => {
    const w = await world("refresh");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Refresh", key: "RF" });
    const [run] = await runRows(w.id.tenantId);
    expect(run!.last_heartbeat_at).toBe(T0);
    w.clock.advance(30_000);
    await ok(s, "task_create", { project_id: "RF", title: "a" });
    expect((await runRows(w.id.tenantId))[0]!.last_heartbeat_at).toBe(T0);
    w.clock.advance(2 * MINUTE);
    await ok(s, "task_create", { project_id: "RF", title: "b" });
    expect((await runRows(w.id.tenantId))[0]!.last_heartbeat_at).toBe(at(30_000 + 2 * MINUTE));
    // Reads never refresh it.
    w.clock.advance(5 * MINUTE);
    await ok(s, "task_query", { project_id: "RF" });
    expect((await runRows(w.id.tenantId))[0]!.last_heartbeat_at).toBe(at(30_000 + 2 * MINUTE));

    // Ended from another session (by key): the run's own session lets go of it, so its next write mints afresh.
    const other = await inSession(w.ctx);
    await ok(other, "run_end", { run_key: run!.run_key, status: "cancelled" });
    w.clock.advance(2 * MINUTE);
    await ok(s, "task_create", { project_id: "RF", title: "c" });
    const runs = await runRows(w.id.tenantId);
    expect(runs.map((r) => [r.kind, r.status])).toEqual([
      ["session", "cancelled"],
      ["session", "running"],
      ["session", "running"],
    ]);
    const sessionRun = runs.find((r) => r.session_id === s.sessionId && r.status === "running")!;
    expect((await activityRows(w.id.tenantId)).at(-1)).toMatchObject({ verb: "task.created", run_id: sessionRun.id });
  });

  it("agrees on one run when several first writes race", async () => {
    const w = await world("race");
    const s = await inSession(w.ctx);
    await ok(w.ctx, "project_create", { title: "Race", key: "RC" });
    await Promise.all(Array.from({ length: 5 }, (_, i) => ok(s, "task_create", { project_id: "RC", title: `t${i}` })));
    const runs = await runRows(w.id.tenantId);
    expect(runs).toHaveLength(1);
    const created = (await activityRows(w.id.tenantId)).filter((a) => a.verb === "task.created");
    expect(created.every((a) => a.run_id === runs[0]!.id)).toBe(true);
  });

  it("a replayed write touches no run", async () => {
    const w = await world("replay");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Replay", key: "RP", idempotency_key: "k1" });
    const replay = await ok(s, "project_create", { title: "Replay", key: "RP", idempotency_key: "k1" });
    expect(replay.idempotent_replay).toBe(true);
    expect(await runRows(w.id.tenantId)).toHaveLength(1);
  });
});

describe("run_fork", () => {
  it("registers a subagent run under the current run, inheriting its repository context", async () => {
    const w = await world("fork");
    const s = await inSession(w.ctx);
    await ok(s, "repo_register", { remote_url: "https://github.com/acme/api" });
    const beat = await ok(s, "run_heartbeat", { repository_id: "acme/api", branch: "feat/x", head_sha: SHA, dirty: true });
    const parent = beat.run as Structured;
    const forked = await ok(s, "run_fork", { label: "write tests", goal: "cover runs", agent_role: "test-writer" });
    expect(forked.parent_run_key).toBe(parent.run_key);
    expect(forked.run).toMatchObject({
      kind: "subagent",
      status: "running",
      parent_run_id: parent.id,
      root_run_id: parent.id,
      label: "write tests",
      goal: "cover runs",
      agent_role: "test-writer",
      repository_id: parent.repository_id,
      branch: "feat/x",
      head_sha: SHA.toLowerCase(),
      dirty: true,
      session_id: s.sessionId,
      counts: {},
      started_at: T0,
      last_heartbeat_at: T0,
      ended_at: null,
      actor_id: w.id.actorId,
    });
    expect(forked.run.run_key).toMatch(RUN_KEY);
    expect((await activityRows(w.id.tenantId)).at(-1)).toMatchObject({ verb: "run.forked", run_id: parent.id });

    // A grandchild (forked by the child's own process) joins the same tree.
    const grand = await ok(attributedTo(w.ctx, forked.run.id), "run_fork", { label: "one file" });
    expect(grand.run).toMatchObject({ parent_run_id: forked.run.id, root_run_id: parent.id });
    expect(grand.parent_run_key).toBe(forked.run.run_key);
  });

  it("needs a current run and a label", async () => {
    const w = await world("fork-bad");
    await rejects(w.ctx, "run_fork", { label: "no session" }, "no_current_run");
    const s = await inSession(w.ctx);
    await rejects(s, "run_fork", { label: "  " }, "invalid_input");
    await rejects(s, "run_fork", {}, "invalid_input");
    const unknown = await fails(s, "run_fork", { label: "x", parent: "y" });
    expect(unknown.code).toBe("invalid_input");
    expect(unknown.hint).toContain("agent_role");
  });
});

describe("run_heartbeat", () => {
  it("moves last_heartbeat_at on every beat, identical ones seconds apart included (no replay)", async () => {
    const w = await world("beat-repeat");
    const s = await inSession(w.ctx);
    const first = await ok(s, "run_heartbeat", { branch: "main" });
    w.clock.advance(30_000);
    const second = await ok(s, "run_heartbeat", { branch: "main" });
    expect(second.idempotent_replay).toBeUndefined();
    expect(Date.parse(second.run.last_heartbeat_at)).toBe(Date.parse(first.run.last_heartbeat_at) + 30_000);
  });

  it("keeps a run alive and tracks HEAD, branch, dirty, repository and merged counts", async () => {
    const w = await world("beat");
    const s = await inSession(w.ctx);
    const repo = (await ok(s, "repo_register", { remote_url: "git@github.com:acme/web.git" })).repository as Structured;
    w.clock.advance(10 * MINUTE);
    const first = await ok(s, "run_heartbeat", { head_sha: SHA, branch: "main", dirty: false, repository_id: repo.id, counts: { tests_passed: 3, files: 2 } });
    expect(first.run).toMatchObject({ head_sha: SHA.toLowerCase(), branch: "main", dirty: false, repository_id: repo.id, counts: { tests_passed: 3, files: 2 }, last_heartbeat_at: at(10 * MINUTE) });
    w.clock.advance(10 * MINUTE);
    const second = await ok(s, "run_heartbeat", { runKey: first.run.run_key.toUpperCase(), dirty: true, counts: { tests_passed: 5 } });
    expect(second.run).toMatchObject({ head_sha: SHA.toLowerCase(), branch: "main", dirty: true, counts: { tests_passed: 5, files: 2 }, last_heartbeat_at: at(20 * MINUTE) });
    // A child is heartbeated by key from anywhere in the tenant.
    const child = (await ok(s, "run_fork", { label: "child" })).run as Structured;
    w.clock.advance(MINUTE);
    const beat = await ok(w.ctx, "run_heartbeat", { run_key: child.run_key, branch: "child-branch" });
    expect(beat.run).toMatchObject({ id: child.id, branch: "child-branch", last_heartbeat_at: at(21 * MINUTE) });
    // Heartbeats are bookkeeping, not activity.
    expect((await activityRows(w.id.tenantId)).map((a) => a.verb)).toEqual(["repo.registered", "run.forked"]);
  });

  it("refuses ended runs, unknown runs and repositories, bad input, and no run to default to", async () => {
    const w = await world("beat-bad");
    const s = await inSession(w.ctx);
    const child = (await ok(s, "run_fork", { label: "child" })).run as Structured;
    await ok(s, "run_end", { run_key: child.run_key, status: "failed" });
    const ended = await rejects(s, "run_heartbeat", { run_key: child.run_key }, "run_ended");
    expect(ended.message).toContain("failed");
    await rejects(s, "run_heartbeat", { run_key: "run-00000000" }, "not_found");
    await rejects(s, "run_heartbeat", { run_key: crypto.randomUUID() }, "not_found");
    await rejects(s, "run_heartbeat", { repository_id: "acme/nope" }, "not_found");
    await rejects(s, "run_heartbeat", { head_sha: "not-a-sha" }, "invalid_input");
    await rejects(s, "run_heartbeat", { counts: { "Bad Name": 1 } }, "invalid_input");
    await rejects(s, "run_heartbeat", { counts: { negative: -1 } }, "invalid_input");
    await rejects(s, "run_heartbeat", { dirty: "yes" }, "invalid_input");
    await rejects(w.ctx, "run_heartbeat", {}, "no_current_run");
  });
});

describe("run_end", () => {
  it("closes a run with a verdict and final counts, once", async () => {
    const w = await world("end");
    const s = await inSession(w.ctx);
    const child = (await ok(s, "run_fork", { label: "child" })).run as Structured;
    w.clock.advance(5 * MINUTE);
    const ended = await ok(s, "run_end", { run_key: child.run_key, status: "succeeded", counts: { tasks_completed: 2 } });
    expect(ended).toMatchObject({
      run: { id: child.id, status: "succeeded", ended_at: at(5 * MINUTE), last_heartbeat_at: at(5 * MINUTE), counts: { tasks_completed: 2 } },
      session_run_released: false,
    });
    const rows = await activityRows(w.id.tenantId);
    expect(rows.at(-1)).toMatchObject({ verb: "run.succeeded", run_id: child.parent_run_id });
    await rejects(s, "run_end", { run_key: child.run_key, status: "failed" }, "run_ended");
    await rejects(s, "run_end", { run_key: child.run_key, status: "abandoned" }, "invalid_input");
    await rejects(s, "run_end", { run_key: child.run_key }, "invalid_input");
    await rejects(w.ctx, "run_end", { status: "succeeded" }, "no_current_run");
  });

  it("ending the session's own run makes the next write mint a fresh one", async () => {
    const w = await world("end-session");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Fresh", key: "FR" });
    const first = (await ok(s, "run_end", { status: "cancelled" })) as Structured;
    expect(first).toMatchObject({ run: { kind: "session", status: "cancelled" }, session_run_released: true });
    expect(await s.currentRun!()).toBeNull();
    await ok(s, "task_create", { project_id: "FR", title: "next" });
    const current = await s.currentRun!();
    expect(current).not.toBeNull();
    expect(current).not.toBe(first.run.id);
    expect((await runRows(w.id.tenantId)).map((r) => r.status)).toEqual(["cancelled", "running"]);
  });
});

describe("run_query", () => {
  it("lists runs newest first with every filter and a complete cursor", async () => {
    const w = await world("query");
    const bob = await w.other("bob");
    const s = await inSession(w.ctx, { runSeriesKey: "nightly" });
    const b = await inSession(bob.ctx);
    await ok(s, "project_create", { title: "Q", key: "QQ" });
    const [root] = (await runRows(w.id.tenantId)) as [Structured];
    const c1 = (await ok(s, "run_fork", { label: "c1" })).run as Structured;
    const c2 = (await ok(s, "run_fork", { label: "c2" })).run as Structured;
    const g1 = (await ok(attributedTo(w.ctx, c1.id as string), "run_fork", { label: "g1" })).run as Structured;
    await ok(s, "run_end", { run_key: c2.run_key, status: "failed" });
    await ok(b, "task_create", { project_id: "QQ", title: "bob's" });
    const bobRun = (await runRows(w.id.tenantId)).at(-1)!;

    const q = async (args: Record<string, unknown>) => ((await ok(w.ctx, "run_query", { limit: 200, ...args })).items as Structured[]).map((r) => r.id);
    expect(await q({})).toEqual([bobRun.id, g1.id, c2.id, c1.id, root.id]);
    expect(await q({ actor_id: "me" })).toEqual([g1.id, c2.id, c1.id, root.id]);
    expect(await q({ actor_id: "bob" })).toEqual([bobRun.id]);
    expect(await q({ status: ["failed"] })).toEqual([c2.id]);
    expect(await q({ status: ["running", "failed"] })).toEqual([bobRun.id, g1.id, c2.id, c1.id, root.id]);
    expect(await q({ kind: "session" })).toEqual([bobRun.id, root.id]);
    expect(await q({ kind: "subagent" })).toEqual([g1.id, c2.id, c1.id]);
    expect(await q({ root_run_id: root.run_key })).toEqual([g1.id, c2.id, c1.id, root.id]);
    expect(await q({ root_run_id: c1.id })).toEqual([g1.id, c2.id, c1.id, root.id]);
    expect(await q({ run_series_key: "nightly" })).toEqual([root.id]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(w.ctx, "run_query", { limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((r: Structured) => r.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(await q({}));

    await rejects(w.ctx, "run_query", { cursor: "garbage" }, "invalid_input");
    await rejects(w.ctx, "run_query", { status: ["sleeping"] }, "invalid_input");
    await rejects(w.ctx, "run_query", { status: [] }, "invalid_input");
    await rejects(w.ctx, "run_query", { actor_id: "nobody" }, "not_found");
    await rejects(w.ctx, "run_query", { root_run_id: "run-00000000" }, "not_found");
    await rejects(w.ctx, "run_query", { limit: 0 }, "invalid_input");
  });
});

describe("run_get", () => {
  it("reads one run by key or id, and with include_children its whole subtree", async () => {
    const w = await world("get");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "G", key: "GG" });
    const root = (await runRows(w.id.tenantId))[0]!;
    const c1 = (await ok(s, "run_fork", { label: "c1" })).run as Structured;
    const c2 = (await ok(s, "run_fork", { label: "c2" })).run as Structured;
    const g1 = (await ok(attributedTo(w.ctx, c1.id as string), "run_fork", { label: "g1" })).run as Structured;

    const byKey = await ok(w.ctx, "run_get", { run_key: root.run_key });
    expect(byKey.run).toMatchObject({ id: root.id, kind: "session", status: "running" });
    expect(byKey.children).toBeUndefined();
    expect((await ok(w.ctx, "run_get", { run_id: root.id })).run).toEqual(byKey.run);

    const tree = await ok(w.ctx, "run_get", { run_key: root.run_key, include_children: true });
    expect(tree.children.map((r: Structured) => [r.id, r.depth])).toEqual([
      [c1.id, 1],
      [c2.id, 1],
      [g1.id, 2],
    ]);
    expect(tree.children_truncated).toBe(false);
    const sub = await ok(w.ctx, "run_get", { run_id: c1.id, include_children: true });
    expect(sub.children.map((r: Structured) => r.id)).toEqual([g1.id]);
    expect((await ok(w.ctx, "run_get", { run_id: g1.id, include_children: true })).children).toEqual([]);

    await rejects(w.ctx, "run_get", {}, "invalid_input");
    await rejects(w.ctx, "run_get", { run_key: root.run_key, run_id: root.id }, "invalid_input");
    await rejects(w.ctx, "run_get", { run_key: "run-00000000" }, "not_found");
    await rejects(w.ctx, "run_get", { run_id: "nope" }, "not_found");
  });
});

describe("run_summary", () => {
  it("counts what the run produced from the activity attributed to it", async () => {
    const w = await world("summary");
    const bob = await w.other("bob");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Sum", key: "SM" });
    await ok(s, "task_create_many", { project_id: "SM", tasks: [{ title: "a" }, { title: "b" }] });
    await ok(s, "task_update", { task_id: "SM-1", patch: { status: "done" } });
    await ok(s, "task_update", { task_id: "SM-2", patch: { status: "in_review", reviewer_actor_id: "bob" } });
    const d = (await ok(s, "decision_log", { title: "One", choice: "A", project_id: "SM" })).decision as Structured;
    await ok(s, "decision_log", { title: "Two", choice: "B", project_id: "SM", supersedes_decision_id: d.id });
    await ok(s, "handoff_create", { to_actor_ids: ["bob"], title: "Question", kind: "question" });
    await ok(s, "repo_register", { remote_url: "https://github.com/acme/sum" });
    await ok(s, "task_code_ref", { task_id: "SM-1", ref_type: "commit", sha: SHA, repository_id: "acme/sum" });
    await ok(s, "run_fork", { label: "helper" });
    const runId = (await s.currentRun!())!;
    // The knowledge room is not on this branch; its verb is what the rollup counts.
    await env.DB.prepare(`INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, summary, run_id) VALUES (?, ?, ?, ?, 'knowledge.written', 'note', 'n1', 'note', ?)`)
      .bind(crypto.randomUUID(), w.id.tenantId, T0, w.id.actorId, runId)
      .run();
    // Someone else's writes in their own session are not this run's.
    await ok(await inSession(bob.ctx), "task_create", { project_id: "SM", title: "bob's" });

    const total = (await activityRows(w.id.tenantId)).filter((a) => a.run_id === runId).length;
    const summary = await ok(s, "run_summary", {});
    expect(summary).toMatchObject({
      run: { id: runId },
      tasks_created: 2,
      tasks_completed: 1,
      decisions_logged: 2,
      knowledge_written: 1,
      handoffs_created: 2,
      code_refs_added: 1,
      activity_total: total,
      child_runs: 1,
    });
    expect(total).toBeGreaterThan(10);
    const byKey = await ok(w.ctx, "run_summary", { run_id: summary.run.run_key });
    expect(byKey).toEqual(summary);
    const child = (await ok(w.ctx, "run_query", { kind: "subagent" })).items[0] as Structured;
    expect(await ok(w.ctx, "run_summary", { run_id: child.id })).toMatchObject({ activity_total: 0, tasks_created: 0, child_runs: 0 });

    await rejects(w.ctx, "run_summary", {}, "no_current_run");
    await rejects(w.ctx, "run_summary", { run_id: "run-00000000" }, "not_found");
    await rejects(w.ctx, "run_summary", { run_id: "" }, "invalid_input");
  });
});

describe("code refs default from the run", () => {
  it("take repository, branch and sha from the run's heartbeat, and only where they describe the same place", async () => {
    const w = await world("refs");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Refs", key: "RR" });
    await ok(s, "task_create", { project_id: "RR", title: "deliver" });
    const api = (await ok(s, "repo_register", { remote_url: "https://github.com/acme/api" })).repository as Structured;
    const web = (await ok(s, "repo_register", { remote_url: "https://github.com/acme/web" })).repository as Structured;
    await ok(s, "repo_link", { project_id: "RR", repository_id: web.id });
    const run = (await ok(s, "run_heartbeat", { repository_id: api.id, branch: "feat/runs", head_sha: SHA })).run as Structured;

    const commit = (await ok(s, "task_code_ref", { task_id: "RR-1", ref_type: "commit" })).code_ref;
    expect(commit).toMatchObject({ repository_id: api.id, branch: "feat/runs", sha: SHA.toLowerCase(), run_id: run.id });
    const pr = (await ok(s, "code_ref_add", { object_type: "project", object_id: "RR", ref_type: "pr", pr_number: 4 })).code_ref;
    expect(pr).toMatchObject({ repository_id: api.id, branch: "feat/runs", sha: SHA.toLowerCase(), run_id: run.id });
    // Another branch of the same repository: its own branch, not the run's HEAD.
    const other = (await ok(s, "task_code_ref", { task_id: "RR-1", ref_type: "branch", branch: "main" })).code_ref;
    expect(other).toMatchObject({ repository_id: api.id, branch: "main", sha: null });
    // Another repository: nothing from the run but its id.
    const elsewhere = (await ok(s, "task_code_ref", { task_id: "RR-1", ref_type: "pr", pr_number: 9, repository_id: "acme/web" })).code_ref;
    expect(elsewhere).toMatchObject({ repository_id: web.id, branch: null, sha: null, run_id: run.id });
    // A commit needs a sha from somewhere.
    await rejects(s, "task_code_ref", { task_id: "RR-1", ref_type: "commit", repository_id: "acme/web" }, "invalid_input");
    // Outside a session: no run, so the project's primary repository is the fallback.
    const plain = (await ok(w.ctx, "task_code_ref", { task_id: "RR-1", ref_type: "pr", pr_number: 10 })).code_ref;
    expect(plain).toMatchObject({ repository_id: web.id, branch: null, sha: null, run_id: null });
    await rejects(w.ctx, "task_code_ref", { task_id: "RR-1", ref_type: "commit" }, "invalid_input");
    // A named run's context applies too.
    const named = (await ok(w.ctx, "task_code_ref", { task_id: "RR-1", ref_type: "commit", run_id: run.run_key })).code_ref;
    expect(named).toMatchObject({ repository_id: api.id, sha: SHA.toLowerCase(), run_id: run.id });
  });
});

describe("the run reaper", () => {
  it("marks running runs without a heartbeat for RUN_ABANDON_AFTER as abandoned, and the session moves on", async () => {
    const w = await world("reaper");
    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Reap", key: "RE" });
    const child = (await ok(s, "run_fork", { label: "quiet child" })).run as Structured;
    const done = (await ok(s, "run_fork", { label: "finished child" })).run as Structured;
    await ok(s, "run_end", { run_key: done.run_key, status: "succeeded" });
    w.clock.advance(90 * MINUTE);
    // Outside the session, so the session's own run keeps its T0 heartbeat.
    await ok(w.ctx, "run_heartbeat", { run_key: child.run_key });

    const runAt = (ms: number, vars: Partial<Env> = {}) => runMaintenance({ ...(env as unknown as Env), ...vars }, new Date(Date.parse(T0) + ms));
    const status = async () => Object.fromEntries((await runRows(w.id.tenantId)).map((r) => [r.label, [r.status, r.ended_at]]));

    const early = await runAt(2 * HOUR - MINUTE);
    expect(early.find((r) => r.job === "run_reaper")).toMatchObject({ ok: true });
    expect((await status()).vitest).toEqual(["running", null]);

    const reports = await runAt(2 * HOUR + MINUTE);
    expect(reports.find((r) => r.job === "run_reaper")).toMatchObject({ ok: true, detail: expect.stringMatching(/^[1-9]\d* silent run\(s\) marked abandoned$/) });
    expect(await status()).toEqual({
      vitest: ["abandoned", T0],
      "quiet child": ["running", null],
      "finished child": ["succeeded", T0],
    });

    // A shorter window from the environment; a nonsense one is reported, not applied.
    const bad = await runAt(3 * HOUR, { RUN_ABANDON_AFTER: "1m" });
    expect(bad.find((r) => r.job === "run_reaper")).toMatchObject({ ok: false, detail: expect.stringContaining("RUN_ABANDON_AFTER") });
    expect((await status())["quiet child"]).toEqual(["running", null]);
    await runAt(2 * HOUR, { RUN_ABANDON_AFTER: "15m" });
    expect((await status())["quiet child"]).toEqual(["abandoned", at(90 * MINUTE)]);
    await rejects(w.ctx, "run_heartbeat", { run_key: child.run_key }, "run_ended");

    // The session whose run was abandoned starts a fresh one with its next write.
    w.clock.advance(HOUR);
    await ok(s, "task_create", { project_id: "RE", title: "back" });
    const runs = await runRows(w.id.tenantId);
    expect(runs.filter((r) => r.kind === "session").map((r) => r.status)).toEqual(["abandoned", "running"]);
    expect((await activityRows(w.id.tenantId)).at(-1)).toMatchObject({ verb: "task.created", run_id: runs.at(-1)!.id });
  });
});

describe("tenant isolation", () => {
  it("another tenant's run is not found by any run tool, and its lists stay its own", async () => {
    const a = await world("iso-a");
    const b = await world("iso-b");
    const sa = await inSession(a.ctx);
    const sb = await inSession(b.ctx);
    await ok(sa, "project_create", { title: "A", key: "AA" });
    const aRun = (await runRows(a.id.tenantId))[0]!;
    const aChild = (await ok(sa, "run_fork", { label: "a child" })).run as Structured;
    await ok(sb, "project_create", { title: "B", key: "BB" });
    const bRun = (await runRows(b.id.tenantId))[0]!;

    for (const ref of [aRun.run_key, aRun.id]) {
      await rejects(sb, "run_get", { run_id: ref }, "not_found");
      await rejects(sb, "run_heartbeat", { run_key: ref }, "not_found");
      await rejects(sb, "run_end", { run_key: ref, status: "cancelled" }, "not_found");
      await rejects(sb, "run_summary", { run_id: ref }, "not_found");
      await rejects(sb, "run_query", { root_run_id: ref }, "not_found");
      await rejects(sb, "activity_log", { verb: "x.y", summary: "s", run_id: ref }, "not_found");
    }
    await rejects(sb, "run_get", { run_key: aChild.run_key }, "not_found");
    expect((await ok(sb, "run_query", {})).items.map((r: Structured) => r.id)).toEqual([bRun.id]);
    expect((await ok(sb, "activity_query", { run_id: aRun.id })).items).toEqual([]);
    expect((await ok(sb, "code_ref_query", { run_id: aRun.run_key })).items).toEqual([]);
    expect((await runRows(a.id.tenantId)).map((r) => r.status)).toEqual(["running", "running"]);
    const sameKey = await call(sb, "run_get", { run_key: aRun.run_key });
    expect(sameKey.error.message).not.toContain(a.slug);
  });
});
