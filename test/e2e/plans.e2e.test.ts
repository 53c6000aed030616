/**
 * A plan's whole life over HTTP against `wrangler dev`, as a team of agents lives it: one agent
 * saves a plan and asks a lead to approve it, the lead approves from the inbox, the plan becomes
 * tasks, two agents claim and finish them with leases, and the plan's progress and status show done.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

type S = Record<string, any>;

async function connect(key: string, name: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=plans,tasks,projects,handoffs`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const caller =
  (client: Client) =>
  async (name: string, args: Record<string, unknown>): Promise<S> => {
    const r = await client.callTool({ name, arguments: args });
    const sc = r.structuredContent as S;
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(sc.error)}`);
    return sc;
  };

const PLAN = {
  id: "e2e-cart-total",
  goal: "Show the cart total with tax on the checkout page",
  steps: [
    { step_number: 1, title: "Compute the total with tax", files_to_modify: [{ path: "src/cart.ts" }], acceptance_criteria: ["total includes tax"] },
    { step_number: 2, title: "Render it on checkout", depends_on: [1], files_to_modify: [{ path: "src/checkout.tsx" }] },
    { step_number: 3, title: "Test both", depends_on: [1, 2], priority: "high" },
  ],
};

describe("a plan's lifecycle over HTTP (wrangler dev)", () => {
  const clients: Client[] = [];
  let author: (name: string, args: Record<string, unknown>) => Promise<S>;
  let lead: (name: string, args: Record<string, unknown>) => Promise<S>;
  let workers: Array<(name: string, args: Record<string, unknown>) => Promise<S>>;

  beforeAll(async () => {
    const [a, l, w1, w2] = await Promise.all([
      connect(inject("keyA"), "e2e-plan-author"),
      connect(inject("raceKeys")[0]!, "e2e-plan-lead"),
      connect(inject("raceKeys")[1]!, "e2e-plan-worker-1"),
      connect(inject("raceKeys")[2]!, "e2e-plan-worker-2"),
    ]);
    clients.push(a, l, w1, w2);
    [author, lead, ...workers] = [caller(a), caller(l), caller(w1), caller(w2)];
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it("lists the plan tools on /mcp?toolsets=plans", async () => {
    const { tools } = await clients[0]!.listTools();
    const names = tools.map((t) => t.name);
    for (const t of ["save_plan", "load_plan", "request_approval", "respond_approval", "plan_to_tasks", "start_step", "complete_step", "fail_step", "view_progress"]) {
      expect(names).toContain(t);
    }
  });

  it("save → approve → plan_to_tasks → claim and finish the tasks → progress shows done", async () => {
    const saved = await author("save_plan", { plan: JSON.stringify(PLAN), name: "Cart total", tags: ["e2e"] });
    expect(saved).toMatchObject({ ok: true, plan_id: PLAN.id, version: 1, created: true });

    const asked = await author("request_approval", { plan_id: PLAN.id, approver_actor_ids: ["racer-1"] });
    const requestId = asked.request.id as string;
    expect(asked.request).toMatchObject({ status: "pending", plan_id: PLAN.id });
    // The lead finds it in the inbox as an approval handoff, and answers it.
    const inbox = await lead("inbox", {});
    expect(JSON.stringify(inbox)).toContain(asked.request.handoff_id);
    const answered = await lead("respond_approval", { request_id: requestId, action: "approve", comment: "go" });
    expect(answered.request.status).toBe("approved");
    expect((await author("load_plan", { plan_id: PLAN.id })).meta.status).toBe("approved");
    const twice = await clients[1]!.callTool({ name: "respond_approval", arguments: { request_id: requestId, action: "reject" } });
    expect(twice.isError).toBe(true);
    expect((twice.structuredContent as S).error.message).toBe(`Approval request ${requestId} is already approved`);

    const project = await author("project_create", { key: "E2EPLAN", title: "Plans end to end" });
    expect(project.ok).toBe(true);
    const made = await author("plan_to_tasks", { plan_id: PLAN.id, project_id: "E2EPLAN" });
    expect(made.created.map((c: S) => c.ref)).toEqual(["E2EPLAN-1", "E2EPLAN-2", "E2EPLAN-3"]);

    // Two agents race for the only ready task: one gets it, the other finds nothing ready.
    const claims = await Promise.all(workers.map((w) => w("task_claim", { project_id: "E2EPLAN", label: "plan" })));
    const winner = claims.findIndex((c) => c.claimed);
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
    expect(claims[winner]!.task.ref).toBe("E2EPLAN-1");
    const holder = workers[winner]!;
    const other = workers[1 - winner]!;
    let progress = await other("view_progress", { plan_id: PLAN.id });
    expect(progress).toMatchObject({ plan_status: "executing", current_steps: [1] });
    expect(progress.steps[0].task).toMatchObject({ ref: "E2EPLAN-1", status: "in_progress" });

    await holder("task_update", { task_id: "E2EPLAN-1", patch: { acceptance_criteria: [{ text: "total includes tax", met: true }] }, fencing_token: claims[winner]!.fencing_token });
    await holder("task_update", { task_id: "E2EPLAN-1", patch: { status: "done" }, fencing_token: claims[winner]!.fencing_token });
    expect((await other("view_progress", { plan_id: PLAN.id })).ready_steps).toEqual([2]);

    // The steps move through the step tools too, which claim and finish the tasks underneath.
    const started = await other("start_step", { plan_id: PLAN.id, step_number: 2 });
    expect(started.lease.task_ref).toBe("E2EPLAN-2");
    await other("complete_step", { plan_id: PLAN.id, step_number: 2, fencing_token: started.lease.fencing_token, notes: "rendered" });
    const next = await holder("task_claim", { project_id: "E2EPLAN" });
    expect(next.task.ref).toBe("E2EPLAN-3");
    await holder("task_update", { task_id: "E2EPLAN-3", patch: { status: "done" }, fencing_token: next.fencing_token });

    progress = await author("view_progress", { plan_id: PLAN.id });
    expect(progress).toMatchObject({ plan_status: "completed", implied_status: "completed", ready_steps: [], current_steps: [] });
    expect(progress.progress).toMatchObject({ total_steps: 3, completed_steps: 3, percentage: 100 });
    expect(progress.steps.map((s: S) => s.task.status)).toEqual(["done", "done", "done"]);
    expect((await author("list_plans", { status: "completed", tags: ["e2e"] })).items.map((p: S) => p.id)).toEqual([PLAN.id]);
  });
});
