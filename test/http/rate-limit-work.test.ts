/**
 * Rate limits count work, not requests (docs/limits.md: Rate limits): each op of a composite call and
 * each batch item beyond the allowance is a unit, charged whole before anything runs, and the
 * answer says what was counted. Also what the limiter does when its counter cannot be reached.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { BATCH_ALLOWANCE, type Meter } from "../../src/core/meter";
import { type PipelineOp, type PipelineSurface, runExecute } from "../../src/core/pipeline";
import { ALL_TOOLS } from "../../src/server/registry";
import { toolListing } from "../../src/core/listing";
import worker from "../../src/index";
import { count, makeCtx, seedIdentity, type TestIdentity } from "../support/helpers";

type Rpc = { jsonrpc: "2.0"; id: unknown; result?: any; error?: { code: number; message: string; data?: any } };

async function direct(req: Request, testEnv: typeof env): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(req, testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

function post(id: TestIdentity, testEnv: typeof env, body: unknown, path = "/mcp"): Promise<Response> {
  return direct(
    new Request(`http://ledger.test${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${id.key}` },
      body: JSON.stringify(body),
    }),
    testEnv,
  );
}

/** One tools/call; its structuredContent and isError. */
async function callOver(id: TestIdentity, testEnv: typeof env, name: string, args: unknown, path = "/mcp"): Promise<any> {
  const res = await post(id, testEnv, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }, path);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as Rpc;
  return { ...body.result.structuredContent, isError: body.result.isError === true };
}

const limits = (keyPerMin: number, tenantPerMin = 100_000) => ({ ...env, RATE_LIMIT_KEY_PER_MIN: String(keyPerMin), RATE_LIMIT_TENANT_PER_MIN: String(tenantPerMin) });
const keyIdOf = async (id: TestIdentity) => (await env.DB.prepare("SELECT id FROM api_keys WHERE actor_id = ? ORDER BY created_at DESC LIMIT 1").bind(id.actorId).first<{ id: string }>())!.id;
/**
 * Units a counter holds from this test: the current window's and the one before, since a test that
 * crosses a minute boundary moves its earlier units into `previous`. Identities are fresh per test,
 * so nothing else is in either.
 */
const unitsIn = async (name: string) => {
  const s = await env.RATE_LIMITS.getByName(name).stored();
  return s ? s.count + s.previous : 0;
};
const keyCount = async (id: TestIdentity) => unitsIn(`key:${await keyIdOf(id)}`);
const tenantCount = async (id: TestIdentity) => unitsIn(`tenant:${id.tenantId}`);
const tasksOf = (id: TestIdentity) => count("SELECT count(*) AS n FROM tasks WHERE tenant_id = ?", id.tenantId);

const tasks = (n: number, prefix = "t") => Array.from({ length: n }, (_, i) => ({ title: `${prefix} ${i}` }));

async function withProject(prefix: string): Promise<{ id: TestIdentity; key: string }> {
  const id = await seedIdentity(`${prefix}-${crypto.randomUUID().slice(0, 8)}`, "agent");
  const made = await callOver(id, limits(0, 0), "project_create", { title: "Rate", key: "RATE" });
  expect(made.ok, JSON.stringify(made)).toBe(true);
  return { id, key: "RATE" };
}

describe("a composite call counts its ops", () => {
  it("charges compact execute one unit per op plus each batch item beyond the allowance, whole and before any op runs", async () => {
    const { id, key } = await withProject("rl-ops");
    // 3 × task_create_many of 30 tasks: 3 × (1 + 20) = 63 units. Before, this was one request's unit.
    const operations = [1, 2, 3].map((n) => ({ op: "task_create_many", params: { project_id: key, tasks: tasks(30, `b${n}`) } }));
    const refused = await callOver(id, limits(50), "execute", { operations }, "/mcp?mode=compact");
    expect(refused.isError).toBe(true);
    expect(refused.error.code).toBe("rate_limited");
    expect(refused.error.message).toContain("needs 63 units");
    expect(refused.error.hint).toMatch(/split it into calls of at most 50 units/);
    // It can never fit under 50 a minute: retrying it unchanged is pointless.
    expect(refused.error.retryable).toBe(false);
    expect(refused.rate_limit).toEqual({ counted: 1, remaining: 49 });
    expect(await tasksOf(id)).toBe(0);
    expect(await keyCount(id)).toBe(1);

    const done = await callOver(id, limits(100), "execute", { operations }, "/mcp?mode=compact");
    expect(done.ok, JSON.stringify(done).slice(0, 500)).toBe(true);
    expect(await tasksOf(id)).toBe(90);
    // The edge's unit for each request, plus 62 more for this one.
    expect(done.rate_limit).toEqual({ counted: 63, remaining: 100 - 64 });
    expect(await keyCount(id)).toBe(64);
    // The op's own answer does not repeat the request's count.
    expect(done.results[0].data.rate_limit).toBeUndefined();
  });

  it("refuses a call that does not fit in what is left this minute, retryable, leaving the tenant's counter as it was", async () => {
    const { id, key } = await withProject("rl-left");
    const testEnv = limits(20, 1000);
    const operations = (i: number) => [
      { op: "task_create", params: { project_id: key, title: `a${i}` } },
      { op: "task_create", params: { project_id: key, title: `b${i}` } },
    ];
    for (let i = 0; i < 9; i++) expect((await callOver(id, testEnv, "execute", { operations: operations(i) }, "/mcp?mode=compact")).ok).toBe(true);
    // 9 calls × 2 units = 18 of 20 counted; one more call is 1 (its request) + 1 (its second op): 20.
    expect(await keyCount(id)).toBe(18);
    const three = [...operations(9), { op: "task_create", params: { project_id: key, title: "c" } }];
    const refused = await callOver(id, testEnv, "execute", { operations: three }, "/mcp?mode=compact");
    expect(refused.error.code).toBe("rate_limited");
    expect(refused.error.retryable).toBe(true);
    expect(refused.error.message).toMatch(/needs 3 units .* has fewer left/);
    expect(await tasksOf(id)).toBe(18);
    // The key refused the extra units; the tenant, which had room, gave them back.
    expect(await keyCount(id)).toBe(19);
    expect(await tenantCount(id)).toBe(19);
  });

  it("counts compact query steps, docs_query steps and docs_execute ops", async () => {
    const id = await seedIdentity(`rl-q-${crypto.randomUUID().slice(0, 8)}`, "agent");
    const testEnv = limits(1000);
    const q = await callOver(
      id,
      testEnv,
      "query",
      { steps: [{ op: "project_query" }, { op: "describe" }, { op: "project_query" }, { op: "describe", params: { target: "task_create" } }, { op: "project_query" }] },
      "/mcp?mode=compact",
    );
    expect(q.ok, JSON.stringify(q).slice(0, 400)).toBe(true);
    expect(q.rate_limit.counted).toBe(5);
    const dq = await callOver(id, testEnv, "docs_query", { steps: [{ op: "list" }, { op: "status" }, { op: "list" }] }, "/mcp?toolsets=docs");
    expect(dq.ok, JSON.stringify(dq).slice(0, 300)).toBe(true);
    expect(dq.rate_limit.counted).toBe(3);
    const adds = [1, 2, 3, 4].map((n) => ({ op: "add", params: { name: `n${n}.md`, content: `note ${n}` } }));
    const dx = await callOver(id, testEnv, "docs_execute", { operations: adds }, "/mcp?toolsets=docs");
    expect(dx.ok, JSON.stringify(dx).slice(0, 300)).toBe(true);
    expect(dx.rate_limit.counted).toBe(4);
    expect(await keyCount(id)).toBe(5 + 3 + 4);
  });

  it("counts each tool call of a 2025-03-26 JSON-RPC batch, refusing the whole batch when they do not fit", async () => {
    const id = await seedIdentity(`rl-rpc-${crypto.randomUUID().slice(0, 8)}`, "agent");
    const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "whoami", arguments: {} } }));
    const ok = await post(id, limits(10), batch(4));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Rpc[]).length).toBe(4);
    expect(await keyCount(id)).toBe(4);
    const refused = await post(id, limits(10), batch(8));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as Rpc;
    expect(body.error!.data.error).toMatchObject({ code: "rate_limited" });
    expect(body.error!.message).toContain("needs 8 units");
    expect(await keyCount(id)).toBe(5);
  });
});

describe("a batch write counts its items beyond the allowance", () => {
  it(`charges task_create_many one unit per task beyond ${BATCH_ALLOWANCE}, and says so`, async () => {
    const { id, key } = await withProject("rl-items");
    const small = await callOver(id, limits(1000), "task_create_many", { project_id: key, tasks: tasks(BATCH_ALLOWANCE) });
    expect(small.rate_limit.counted).toBe(1);
    const big = await callOver(id, limits(1000), "task_create_many", { project_id: key, tasks: tasks(25, "big") });
    expect(big.ok).toBe(true);
    expect(big.rate_limit).toEqual({ counted: 16, remaining: 1000 - 17 });
    const refused = await callOver(id, limits(30), "task_create_many", { project_id: key, tasks: tasks(100, "huge") });
    expect(refused.error).toMatchObject({ code: "rate_limited", retryable: false });
    expect(refused.error.message).toContain("needs 91 units");
    expect(refused.error.hint).toContain("batches of at most 39 items");
    expect(await tasksOf(id)).toBe(BATCH_ALLOWANCE + 25);
  });

  it("every write tool with an array of things to write declares what it costs", () => {
    // Arrays that are attributes of the one thing written (labels, tags, dependencies, recipients
    // of one handoff, files of one step) are not batches; everything else with an array of items is.
    const attributes = new Set([
      "whoami.include",
      "register_actor.capabilities",
      "task_create.labels",
      "task_create.acceptance_criteria",
      "task_create.depends_on",
      "task_link.add_depends_on",
      "task_link.remove_depends_on",
      "task_claim.repository_ids",
      // Which of one's reservations to let go: a selector, as releasing all of them is.
      "path_release.reservation_ids",
      "path_release.paths",
      // Which notification kinds one subscription carries: a filter of the one thing written.
      "webhook_subscribe.kinds",
      // The paths one note, decision or code ref is about: attributes of the one thing written.
      "knowledge_write.paths",
      "knowledge_update.paths",
      "decision_log.paths",
      "code_ref_add.paths",
      "task_code_ref.paths",
      "decision_log.options",
      "handoff_create.to_actor_ids",
      "handoff_create.options",
      "inbox.kinds",
      "inbox.fields",
      "knowledge_write.tags",
      "comment_add.mentions",
      "skill_upsert.tags",
      "review_settings.hotspots",
      "review_settings.config_paths",
      "save_plan.tags",
      "create_plan.include_paths",
      "create_plan.exclude_paths",
      "create_plan.save_tags",
      "refine_plan.focus_steps",
      "request_approval.step_numbers",
      "request_approval.approver_actor_ids",
      "complete_step.files_modified",
      "plan_to_tasks.labels",
    ]);
    const unpriced: string[] = [];
    for (const def of ALL_TOOLS.filter((t) => !t.annotations.readOnly)) {
      const props = (toolListing(def).inputSchema as { properties?: Record<string, { type?: string; anyOf?: { type?: string }[] }> }).properties ?? {};
      for (const [name, p] of Object.entries(props)) {
        const isArray = p.type === "array" || (p.anyOf ?? []).some((a) => a.type === "array");
        const priced = def.cost === "ops" || (def.cost !== undefined && def.cost.items === name);
        if (isArray && !priced && !attributes.has(`${def.name}.${name}`)) unpriced.push(`${def.name}.${name}`);
      }
    }
    expect(unpriced).toEqual([]);
  });
});

describe("a $prev reference that brings in a batch", () => {
  it("charges the step the units its resolved batch needs beyond its share, before it runs", async () => {
    const charges: { extra: number; units: number }[] = [];
    const meter: Meter = { charge: async (extra, call) => void charges.push({ extra, units: call.units }), report: () => ({ counted: 0, remaining: null }) };
    const ran: number[] = [];
    const emit: PipelineOp = { name: "emit", kind: "execute", invoke: async () => ({ ok: true, data: { items: Array.from({ length: 16 }, (_, i) => i) } }) };
    const write: PipelineOp = {
      name: "write",
      kind: "execute",
      units: (p) => 1 + (Array.isArray(p.items) ? Math.max(0, p.items.length - BATCH_ALLOWANCE) : 0),
      invoke: async (c, p) => (ran.push((p.items as unknown[]).length), { ok: true, data: { paid: c.paid ?? 0 } }),
    };
    const surface: PipelineSurface = { queryTool: "q", executeTool: "x", find: (n) => (n === "emit" ? emit : n === "write" ? write : undefined), names: () => ["emit", "write"] };
    const id = await seedIdentity("rl-prev", "agent");
    const ctx: Ctx = { ...makeCtx(id), meter };
    const answer = await runExecute(ctx, surface, [{ op: "emit" }, { op: "write", params: { items: "$prev.items" } }], false);
    expect(answer.succeeded).toBe(2);
    // Up front: 2 ops, one already paid by the request; then the 16-item batch's 6 units less its 1-unit share.
    expect(charges).toEqual([
      { extra: 1, units: 2 },
      { extra: 6, units: 7 },
    ]);
    expect(ran).toEqual([16]);
    expect(answer.results[1]!.data).toEqual({ paid: 7 });
  });
});

describe("when a counter cannot be reached", () => {
  const broken = () =>
    ({
      ...limits(100),
      RATE_LIMITS: { getByName: () => ({ hit: () => Promise.reject(new Error("counter down")), refund: () => Promise.reject(new Error("counter down")) }) },
    }) as unknown as typeof env;

  it("lets one-unit calls through (fail open) and refuses calls that cost more (fail closed), doing nothing", async () => {
    const { id, key } = await withProject("rl-down");
    const testEnv = broken();
    const ping = await post(id, testEnv, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(ping.status).toBe(200);
    const one = await callOver(id, testEnv, "task_create", { project_id: key, title: "still works" });
    expect(one.ok).toBe(true);
    const small = await callOver(id, testEnv, "task_create_many", { project_id: key, tasks: tasks(BATCH_ALLOWANCE, "s") });
    expect(small.ok).toBe(true);
    expect(small.rate_limit).toEqual({ counted: 1, remaining: null });
    const big = await callOver(id, testEnv, "task_create_many", { project_id: key, tasks: tasks(11, "big") });
    expect(big.isError).toBe(true);
    expect(big.error).toMatchObject({ code: "rate_limiter_unavailable", retryable: true });
    expect(big.error.hint).toContain("one unit");
    const composite = await callOver(
      id,
      testEnv,
      "execute",
      {
        operations: [
          { op: "task_create", params: { project_id: key, title: "x" } },
          { op: "task_create", params: { project_id: key, title: "y" } },
        ],
      },
      "/mcp?mode=compact",
    );
    expect(composite.error.code).toBe("rate_limiter_unavailable");
    expect(await tasksOf(id)).toBe(1 + BATCH_ALLOWANCE);
  });
});
