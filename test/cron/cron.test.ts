/**
 * The scheduled side, driven through the worker's own scheduled() the way the runtime calls it:
 * which jobs each trigger runs, the daily stale-decision sweep, and a failing job not stopping the rest.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { CHAIN_SWEEP_JOB } from "../../src/cron/chain-sweep";
import { DAILY_CRON, FREQUENT_CRON, jobsFor } from "../../src/cron/maintenance";
import { STALE_SWEEP_JOB, sweepStaleDecisions } from "../../src/cron/stale-sweep";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { count, newWorld, ok, type Structured } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const DAY_AFTER_EXPIRY = "2030-01-11T06:17:00.000Z";

interface Logged {
  job: string;
  ok: boolean;
  detail: string;
}

/** Runs scheduled() for one trigger and returns the job lines it logged, in order. */
async function fire(cron: string, at: string, workerEnv: Env = env as unknown as Env): Promise<Logged[]> {
  const lines: Logged[] = [];
  const capture = (ok: boolean) => (msg: unknown) => {
    const m = /^\[cron (.+?)\] (\w+): (.*)$/s.exec(String(msg));
    if (m && m[1] === cron) lines.push({ job: m[2]!, ok, detail: m[3]! });
  };
  const info = vi.spyOn(console, "info").mockImplementation(capture(true));
  const error = vi.spyOn(console, "error").mockImplementation(capture(false));
  try {
    const ectx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron, scheduledTime: new Date(at) }), workerEnv, ectx);
    await waitOnExecutionContext(ectx);
  } finally {
    info.mockRestore();
    error.mockRestore();
  }
  return lines;
}

async function notices(ctx: Parameters<typeof ok>[0]): Promise<Structured[]> {
  return ((await ok(ctx, "notification_query", {})).items as Structured[]).filter((n) => n.kind === "stale_decision");
}

/** A decision that the change ledger's rules call expired once 2030-01-10 has passed. */
async function expiringDecision(ctx: Parameters<typeof ok>[0], entity: string): Promise<string> {
  const r = await ok(ctx, "log_change", { entity_path: entity, change_type: "add", reasoning: `temporary ${entity}`, expires_when: "date:2030-01-10" });
  return r.id as string;
}

describe("cron triggers", () => {
  it("the frequent trigger runs the 5-minute jobs, the daily one the sweep, an unknown expression the frequent set", async () => {
    const frequent = [
      "lease_reaper",
      "run_reaper",
      "idempotency_retention",
      "hook_edits_retention",
      "client_sessions_retention",
      "app_sessions_retention",
      "mcp_tasks_retention",
      "embedding_backfill",
      "webhook_retry",
      "webhook_backlog",
      "delivery_retention",
      "docs_orphan_chunks",
      "docs_rowless_chunks",
      "code_orphan_generations",
      "oauth_purge",
      "docs_index_sweep",
      "attachment_orphans",
      "outbound_hooks",
    ];
    expect(jobsFor(FREQUENT_CRON)).toEqual(frequent);
    expect(jobsFor(DAILY_CRON)).toEqual([STALE_SWEEP_JOB, CHAIN_SWEEP_JOB]);

    const fast = await fire(FREQUENT_CRON, T0);
    expect(fast.map((l) => l.job)).toEqual(frequent);
    expect(fast.every((l) => l.ok)).toBe(true);

    const daily = await fire(DAILY_CRON, T0);
    expect(daily).toEqual([
      { job: STALE_SWEEP_JOB, ok: true, detail: expect.stringMatching(/tenant\(s\) swept/) },
      { job: CHAIN_SWEEP_JOB, ok: true, detail: expect.stringMatching(/tenant chain\(s\) verified/) },
    ]);

    expect((await fire("0 0 * * *", T0)).map((l) => l.job)).toEqual(frequent);
  });

  it("a job that throws is reported failed and the jobs after it still run", async () => {
    const w = await newWorld("cron-fail", { start: T0 });
    await env.DB.prepare(
      `INSERT INTO idempotency_keys (tenant_id, actor_id, tool, key, request_hash, status, result, created_at, expires_at) VALUES (?, ?, 'log_change', 'k1', 'h', 'done', '{}', ?, ?)`,
    )
      .bind(w.id.tenantId, w.id.actorId, T0, T0)
      .run();
    // The run reaper's dependency (its window setting) is broken; the jobs on either side are not.
    const broken = { ...(env as unknown as Env), RUN_ABANDON_AFTER: "soon" };
    const lines = await fire(FREQUENT_CRON, "2030-01-02T00:00:00.000Z", broken);
    expect(lines.map((l) => [l.job, l.ok])).toEqual([
      ["lease_reaper", true],
      ["run_reaper", false],
      ["idempotency_retention", true],
      ["hook_edits_retention", true],
      ["client_sessions_retention", true],
      ["app_sessions_retention", true],
      ["mcp_tasks_retention", true],
      ["embedding_backfill", true],
      ["webhook_retry", true],
      ["webhook_backlog", true],
      ["delivery_retention", true],
      ["docs_orphan_chunks", true],
      ["docs_rowless_chunks", true],
      ["code_orphan_generations", true],
      ["oauth_purge", true],
      ["docs_index_sweep", true],
      ["attachment_orphans", true],
      ["outbound_hooks", true],
    ]);
    expect(lines[1]!.detail).toContain("RUN_ABANDON_AFTER");
    expect(await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
  });
});

describe("hook_edits_retention", () => {
  it("drops the hooks' edit notes older than a week and keeps the recent ones", async () => {
    const w = await newWorld("cron-hook-edits", { start: T0 });
    const note = (path: string, at: string) =>
      env.DB.prepare(`INSERT INTO hook_edits (tenant_id, actor_id, session_id, path, tool, edited_at) VALUES (?, ?, 's', ?, 'Edit', ?)`).bind(w.id.tenantId, w.id.actorId, path, at).run();
    await note("old.ts", "2029-12-20T00:00:00.000Z");
    await note("new.ts", "2029-12-31T00:00:00.000Z");
    const lines = await fire(FREQUENT_CRON, "2030-01-02T00:00:00.000Z");
    expect(lines.find((l) => l.job === "hook_edits_retention")).toMatchObject({ ok: true, detail: expect.stringMatching(/^\d+ old hook edit note\(s\) removed$/) });
    const left = await env.DB.prepare("SELECT path FROM hook_edits WHERE tenant_id = ?").bind(w.id.tenantId).all<{ path: string }>();
    expect(left.results.map((r) => r.path)).toEqual(["new.ts"]);
  });
});

describe("client_sessions_retention", () => {
  it("drops client session mappings first seen over a week ago and keeps the recent ones", async () => {
    const w = await newWorld("cron-client-sessions", { start: T0 });
    const seen = (client: string, at: string) =>
      env.DB.prepare(`INSERT INTO client_sessions (tenant_id, actor_id, client_session_id, mcp_session_id, seen_at) VALUES (?, ?, ?, 'm', ?)`).bind(w.id.tenantId, w.id.actorId, client, at).run();
    await seen("old", "2029-12-20T00:00:00.000Z");
    await seen("new", "2029-12-31T00:00:00.000Z");
    const lines = await fire(FREQUENT_CRON, "2030-01-02T00:00:00.000Z");
    expect(lines.find((l) => l.job === "client_sessions_retention")).toMatchObject({ ok: true, detail: expect.stringMatching(/^\d+ old client session mapping\(s\) removed$/) });
    const left = await env.DB.prepare("SELECT client_session_id AS id FROM client_sessions WHERE tenant_id = ?").bind(w.id.tenantId).all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual(["new"]);
  });
});

describe("stale_decision_sweep", () => {
  it("notifies the actor who logged each stale decision, once a day, and only in its own tenant", async () => {
    const a = await newWorld("cron-sweep-a", { start: T0, actor: "alice" });
    const bob = await a.other("bob");
    // Tenant B has an actor of the same name: a name is only ever looked up inside its tenant.
    const b = await newWorld("cron-sweep-b", { start: T0, actor: "alice" });
    const decision = await expiringDecision(a.ctx, "flags.beta");
    await ok(bob.ctx, "log_change", { entity_path: "flags.gamma", change_type: "add", reasoning: "kept for good" });

    // Before the decision expires the sweep finds nothing to say.
    await fire(DAILY_CRON, "2030-01-09T06:17:00.000Z");
    expect(await notices(a.ctx)).toEqual([]);

    // The frequent trigger never sweeps.
    await fire(FREQUENT_CRON, DAY_AFTER_EXPIRY);
    expect(await notices(a.ctx)).toEqual([]);

    const [line] = await fire(DAILY_CRON, DAY_AFTER_EXPIRY);
    expect(line).toMatchObject({ job: STALE_SWEEP_JOB, ok: true });
    const got = await notices(a.ctx);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ object_type: "change_event", object_id: decision, from_actor_id: "", created_at: DAY_AFTER_EXPIRY, read_at: null });
    expect(got[0]!.summary).toMatch(/^flags\.beta: its expiry condition fired/);
    expect(await notices(bob.ctx)).toEqual([]);
    expect(await notices(b.ctx)).toEqual([]);

    // A second run the same day (a retry, a manual trigger) adds nothing.
    await fire(DAILY_CRON, "2030-01-11T18:00:00.000Z");
    expect(await notices(a.ctx)).toHaveLength(1);

    // Still stale the next day: one more reminder.
    await fire(DAILY_CRON, "2030-01-12T06:17:00.000Z");
    expect(await notices(a.ctx)).toHaveLength(2);

    // The sweep is no query by anyone: it leaves no tool_calls trail (which would feed the rules' signals).
    expect(await count("SELECT COUNT(*) AS n FROM tool_calls WHERE tenant_id = ? AND tool_name = 'stale_decisions'", a.id.tenantId)).toBe(0);
  });

  it("tenant B's stale decisions reach B's actor only", async () => {
    const a = await newWorld("cron-iso-a", { start: T0, actor: "carol" });
    const b = await newWorld("cron-iso-b", { start: T0, actor: "carol" });
    const inB = await expiringDecision(b.ctx, "svc.cache");
    await fire(DAILY_CRON, DAY_AFTER_EXPIRY);
    expect((await notices(b.ctx)).map((n) => n.object_id)).toEqual([inB]);
    expect(await notices(a.ctx)).toEqual([]);
  });

  it("is bounded per run and continues where it stopped", async () => {
    const worlds = [];
    for (const n of [1, 2, 3]) {
      const w = await newWorld(`cron-bound-${n}`, { start: T0, actor: "dave" });
      await expiringDecision(w.ctx, "flags.one");
      await expiringDecision(w.ctx, "flags.two");
      worlds.push(w);
    }
    const day = new Date("2030-02-01T06:17:00.000Z");
    // Tenants from the other tests sort among these; sweep with tiny limits until a pass wraps.
    for (let run = 0; run < 50; run++) {
      const detail = await sweepStaleDecisions(env.DB, day, { tenants: 2, notices: 3 });
      expect(detail).toMatch(/^[0-2] tenant\(s\) swept, \d+ stale decision\(s\), [0-3] notification\(s\) sent; /);
      if (detail.endsWith("all tenants swept")) break;
    }
    for (const w of worlds) expect(await notices(w.ctx)).toHaveLength(2);
  });
});

describe("app_sessions_retention", () => {
  it("drops the dashboard's expired sessions and keeps the live ones", async () => {
    const w = await newWorld("cron-app-sessions", { start: T0 });
    const session = (hash: string, expires: string) =>
      env.DB.prepare(`INSERT INTO app_sessions (token_hash, tenant_id, actor_id, key_id, access, created_at, expires_at) VALUES (?, ?, ?, 'k', 'full', ?, ?)`)
        .bind(hash, w.id.tenantId, w.id.actorId, T0, expires)
        .run();
    await session("gone", "2030-01-01T12:00:00.000Z");
    await session("live", "2030-01-02T12:00:00.000Z");
    const lines = await fire(FREQUENT_CRON, "2030-01-02T00:00:00.000Z");
    expect(lines.find((l) => l.job === "app_sessions_retention")).toMatchObject({ ok: true, detail: expect.stringMatching(/^\d+ expired dashboard session\(s\) removed$/) });
    const left = await env.DB.prepare("SELECT token_hash AS h FROM app_sessions WHERE tenant_id = ?").bind(w.id.tenantId).all<{ h: string }>();
    expect(left.results.map((r) => r.h)).toEqual(["live"]);
  });
});

describe("mcp_tasks_retention", () => {
  it("drops MCP tasks past their expiry and keeps the live ones", async () => {
    const w = await newWorld("cron-mcp-tasks", { start: T0 });
    const task = (id: string, expires: string) =>
      env.DB.prepare(
        `INSERT INTO mcp_tasks (tenant_id, id, actor_id, tool, driver, link, status, created_at, updated_at, ttl_ms, poll_ms, expires_at) VALUES (?, ?, ?, 'index_workspace', 'code.index', '{}', 'working', ?, ?, 1, 1, ?)`,
      )
        .bind(w.id.tenantId, id, w.id.actorId, T0, T0, expires)
        .run();
    await task("gone", "2030-01-01T12:00:00.000Z");
    await task("live", "2030-01-02T12:00:00.000Z");
    const lines = await fire(FREQUENT_CRON, "2030-01-02T00:00:00.000Z");
    expect(lines.find((l) => l.job === "mcp_tasks_retention")).toMatchObject({ ok: true, detail: expect.stringMatching(/^\d+ expired MCP task\(s\) removed$/) });
    const left = await env.DB.prepare("SELECT id FROM mcp_tasks WHERE tenant_id = ?").bind(w.id.tenantId).all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual(["live"]);
  });
});
