/**
 * Plan approvals: request_approval (whole plan or steps, approvers, the approval handoff in the
 * approvers' inbox, de-duplication), respond_approval (approve, reject, request_modification, the
 * reference's message for a request already answered, racing answers, who may answer, the plan's
 * status and a plan changed since the request), list_approvals, bad input and tenant isolation,
 * through the registry against local D1.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { call, count, fails, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured, type Who, type World } from "../support/helpers";

const START = "2026-07-01T09:00:00.000Z";

const PLAN = {
  id: "rate-limit",
  goal: "Add rate limiting to the public API",
  steps: [
    { step_number: 1, title: "Add a limiter module", files_to_create: [{ path: "src/http/limit.ts", change_type: "create" }] },
    { step_number: 2, title: "Wire it into the router", depends_on: [1], files_to_modify: [{ path: "src/http/router.ts" }], acceptance_criteria: ["429 after the limit"] },
    { step_number: 3, title: "Document the limits", depends_on: [1], priority: "low" },
  ],
  risks: [{ issue: "Legitimate bursts get refused", mitigation: "Generous burst size" }],
};

interface Team {
  w: World;
  alice: Ctx;
  bob: Who;
  carol: Who;
}

/** alice saves the plan; bob and carol are other actors of her tenant. */
async function team(): Promise<Team> {
  const w = await newWorld("approvals", { start: START, actor: "alice" });
  await ok(w.ctx, "save_plan", { plan: PLAN, name: "Rate limit" });
  return { w, alice: w.ctx, bob: await w.other("bob"), carol: await w.other("carol") };
}

const request = async (ctx: Ctx, args: Record<string, unknown>): Promise<Structured> => {
  const r = await ok(ctx, "request_approval", { plan_id: PLAN.id, ...args });
  return r.request as Structured;
};

/** Everything the approval tools write in a tenant, so a refused call can be shown to write nothing. */
const tenantState = (tenantId: string) => async () => {
  const all = async (sql: string) => (await env.DB.prepare(sql).bind(tenantId).all()).results;
  return {
    approvals: await all("SELECT * FROM plan_approvals WHERE tenant_id = ? ORDER BY id"),
    plans: await all("SELECT * FROM plans WHERE tenant_id = ? ORDER BY id"),
    handoffs: await all("SELECT * FROM handoffs WHERE tenant_id = ? ORDER BY id"),
    recipients: await all("SELECT * FROM handoff_recipients WHERE tenant_id = ? ORDER BY handoff_id, actor_id"),
    notifications: await all("SELECT id, actor_id, kind, object_id FROM notifications WHERE tenant_id = ? ORDER BY seq"),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
  };
};

const handoffRow = (id: string) => env.DB.prepare("SELECT * FROM handoffs WHERE id = ?").bind(id).first<Structured>();
const planStatus = async (ctx: Ctx) => (await ok(ctx, "load_plan", { plan_id: PLAN.id })).meta.status as string;

describe("request_approval", () => {
  it("puts a whole-plan request in the approver's inbox as an approval handoff carrying the plan and how to answer", async () => {
    const { w, alice, bob } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"], note: "Before Friday, please.", due_at: "2026-07-03" });
    expect(req).toMatchObject({
      plan_id: PLAN.id,
      plan_version: 1,
      type: "full_plan",
      step_numbers: [],
      status: "pending",
      summary: `Approve plan: ${PLAN.goal}`,
      note: "Before Friday, please.",
      approver_actor_ids: [bob.id.actorId],
      requested_by: w.id.actorId,
      created_at: START,
      due_at: "2026-07-03T00:00:00.000Z",
      responded_by: null,
      responded_at: null,
      comment: null,
      modifications: null,
    });
    expect(req.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);

    const inbox = await ok(bob.ctx, "inbox", { kinds: ["approval"] });
    expect(inbox.items).toHaveLength(1);
    const h = inbox.items[0];
    expect(h).toMatchObject({
      id: req.handoff_id,
      kind: "approval",
      title: `Approve plan: ${PLAN.goal}`,
      from_actor_id: w.id.actorId,
      to_actor_ids: [bob.id.actorId],
      status: "open",
      allow_free_text: false,
      due_at: "2026-07-03T00:00:00.000Z",
      related_project_id: null,
    });
    expect(h.options.map((o: Structured) => o.label)).toEqual(["approve", "reject", "request_modification"]);
    expect(h.body).toMatch(/^Before Friday, please\.\n/);
    expect(h.body).toContain("Plan: Rate limit (rate-limit), version 1");
    expect(h.body).toContain("Asked: the whole plan (3 steps)");
    expect(h.body).toContain("2. Wire it into the router (medium priority)");
    expect(h.body).toContain("Affected files (2): src/http/limit.ts, src/http/router.ts");
    expect(h.body).toContain("- Legitimate bursts get refused (medium): Generous burst size");
    expect(h.body).toContain(`respond_approval {"request_id": "${req.id}", "action": "approve"}`);
    // Bob was notified of the request; alice, who asked, was not.
    expect((await ok(bob.ctx, "notification_query", {})).items.map((n: Structured) => [n.kind, n.object_id])).toEqual([["approval", req.handoff_id]]);
    expect(await ok(alice, "list_approvals", {})).toMatchObject({ items: [req] });
  });

  it("asks about specific steps of the current version: one is a step request, several a step group, in order without repeats", async () => {
    const { alice, bob } = await team();
    const one = await request(alice, { step_numbers: [2], approver_actor_ids: [bob.id.actorId] });
    expect(one).toMatchObject({ type: "step", step_numbers: [2], summary: "Approve step 2: Wire it into the router" });
    const group = await request(alice, { step_numbers: [3, 1, 3], approver_actor_ids: ["bob"] });
    expect(group).toMatchObject({ type: "step_group", step_numbers: [1, 3], summary: "Approve steps 1, 3: Add a limiter module, Document the limits" });
    const h = await handoffRow(one.handoff_id);
    expect(h!.body).toContain("Asked: step 2");
    expect(h!.body).toContain("   Files: src/http/router.ts");
    expect(h!.body).toContain("   Done when: 429 after the limit");
    expect(h!.body).not.toContain("Add a limiter module");
    expect((await ok(bob.ctx, "inbox", {})).total).toBe(2);
  });

  it("defaults the approver to the plan's creator, and refuses to leave the creator approving their own request", async () => {
    const { w, alice, carol } = await team();
    const req = await request(carol.ctx, {});
    expect(req).toMatchObject({ approver_actor_ids: [w.id.actorId], requested_by: carol.id.actorId });
    const err = await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, step_numbers: [1] }, "invalid_input", tenantState(alice.tenantId));
    expect(err.message).toMatch(/No approver: you created plan rate-limit/);
    expect(err.hint).toMatch(/approver_actor_ids/);
    const self = await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, step_numbers: [1], approver_actor_ids: ["bob", "me"] }, "invalid_input", tenantState(alice.tenantId));
    expect(self.message).toBe("You cannot be an approver of your own request.");
  });

  it("returns the pending request when asked again for the same version and steps (deduplicated), also when two calls race", async () => {
    const { alice, bob } = await team();
    const first = await request(alice, { approver_actor_ids: ["bob"] });
    const before = await tenantState(alice.tenantId)();
    const again = await ok(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["carol"], note: "again" });
    expect(again).toMatchObject({ deduplicated: true, request: first });
    expect(await tenantState(alice.tenantId)()).toEqual(before);

    // Other steps are another request; two racing requests for the same steps make one. (Their notes
    // differ: two identical calls would be one call and its retry, not two requests.)
    const raced = await Promise.all([1, 2].map((i) => call(alice, "request_approval", { plan_id: PLAN.id, step_numbers: [2], approver_actor_ids: ["bob"], note: `race ${i}` })));
    expect(raced.every((r) => r.ok)).toBe(true);
    expect(raced[0]!.request.id).toBe(raced[1]!.request.id);
    expect(raced.map((r) => r.deduplicated).sort()).toEqual([false, true]);
    expect(await count("SELECT COUNT(*) AS n FROM plan_approvals WHERE tenant_id = ?", alice.tenantId)).toBe(2);
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ?", alice.tenantId)).toBe(2);

    // Once answered, asking again makes a new request.
    await ok(bob.ctx, "respond_approval", { request_id: first.id, action: "reject" });
    const fresh = await ok(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["bob"] });
    expect(fresh.deduplicated).toBe(false);
    expect(fresh.request.id).not.toBe(first.id);
  });

  it("request_approval: steps not in the plan, an unknown approver or plan, a bad due_at, unknown keys", async () => {
    const { alice } = await team();
    const state = tenantState(alice.tenantId);
    const steps = await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, step_numbers: [2, 9, 7], approver_actor_ids: ["bob"] }, "invalid_input", state);
    expect(steps.message).toBe("Steps 7, 9 not found in plan rate-limit");
    expect(steps.hint).toContain("Version 1 has steps 1, 2, 3");
    expect((await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, step_numbers: [4], approver_actor_ids: ["bob"] }, "invalid_input", state)).message).toBe(
      "Step 4 not found in plan rate-limit",
    );
    await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["nobody"] }, "not_found", state);
    expect((await refusedWithoutWrites(alice, "request_approval", { plan_id: "nope", approver_actor_ids: ["bob"] }, "not_found", state)).message).toBe("Plan nope not found");
    await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["bob"], due_at: "next week" }, "invalid_input", state);
    await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: [] }, "invalid_input", state);
    await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["bob"], step_numbers: [0] }, "invalid_input", state);
    await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["bob"], approver: "bob" }, "invalid_input", state);
  });
});

describe("respond_approval", () => {
  it("approve: the request is approved, the plan too, the handoff is resolved and leaves the inbox, and the requester is told", async () => {
    const { w, alice, bob } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"] });
    w.clock.advance(MINUTE);
    const r = await ok(bob.ctx, "respond_approval", { request_id: req.id, action: "approve", comment: "Looks right." });
    const at = new Date(Date.parse(START) + MINUTE).toISOString();
    expect(r).toMatchObject({ plan_status: "approved", request: { ...req, status: "approved", responded_by: bob.id.actorId, responded_at: at, comment: "Looks right.", modifications: null } });
    expect(r.warnings).toBeUndefined();
    expect(await planStatus(alice)).toBe("approved");

    const h = await handoffRow(req.handoff_id);
    expect(h).toMatchObject({ status: "resolved", resolution: "processed", verdict: "approved", responded_by: bob.id.actorId, responded_at: at });
    expect(JSON.parse(h!.response as string)).toEqual({ chosen_option: "approve", text: "Looks right." });
    expect((await ok(bob.ctx, "inbox", {})).total).toBe(0);
    const told = (await ok(alice, "notification_query", {})).items;
    expect(told).toEqual([expect.objectContaining({ kind: "response", object_id: req.handoff_id, from_actor_id: bob.id.actorId, summary: `approved: Approve plan: ${PLAN.goal}` })]);
    expect((await ok(alice, "handoff_query", { direction: "from_me" })).items[0]).toMatchObject({ id: req.handoff_id, status: "resolved", verdict: "approved" });
    expect((await ok(alice, "list_approvals", { plan_id: PLAN.id, status: "approved" })).items.map((a: Structured) => a.id)).toEqual([req.id]);
  });

  it("reject and request_modification record the answer and leave the plan's status as it is", async () => {
    const { alice, bob } = await team();
    const a = await request(alice, { step_numbers: [1], approver_actor_ids: ["bob"] });
    const b = await request(alice, { approver_actor_ids: ["bob"] });
    const rejected = await ok(bob.ctx, "respond_approval", { request_id: a.id, action: "reject", comment: "Too broad." });
    expect(rejected).toMatchObject({ plan_status: "ready", request: { status: "rejected", comment: "Too broad." } });
    expect(await handoffRow(a.handoff_id)).toMatchObject({ status: "resolved", verdict: "rejected" });

    const modify = await ok(bob.ctx, "respond_approval", { request_id: b.id, action: "request_modification", modifications: "Add a step for metrics." });
    expect(modify).toMatchObject({ plan_status: "ready", request: { status: "modification_requested", modifications: "Add a step for metrics.", comment: null } });
    const h = await handoffRow(b.handoff_id);
    expect(h).toMatchObject({ status: "resolved", verdict: "changes_requested" });
    expect(JSON.parse(h!.response as string)).toEqual({ chosen_option: "request_modification", modifications: "Add a step for metrics." });
    expect(await planStatus(alice)).toBe("ready");
  });

  it("a step-level approve records the answer and leaves the plan's status (only a whole-plan approval approves the plan)", async () => {
    const { alice, bob } = await team();
    const req = await request(alice, { step_numbers: [1, 2], approver_actor_ids: ["bob"] });
    const r = await ok(bob.ctx, "respond_approval", { request_id: req.id, action: "approve" });
    expect(r).toMatchObject({ plan_status: "ready", request: { status: "approved", type: "step_group" } });
    expect(r.warnings).toBeUndefined();
  });

  it("answering a request that is no longer pending gives the reference's message and changes nothing", async () => {
    const { alice, bob } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"] });
    await ok(bob.ctx, "respond_approval", { request_id: req.id, action: "approve" });
    const err = await refusedWithoutWrites(bob.ctx, "respond_approval", { request_id: req.id, action: "reject", comment: "Changed my mind." }, "conflict", tenantState(alice.tenantId));
    expect(err).toMatchObject({ message: `Approval request ${req.id} is already approved`, retryable: false });
  });

  it("two approvers racing: exactly one answer lands, the other gets 'is already <status>', and the requester hears once", async () => {
    const { alice, bob, carol } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob", "carol"] });
    const [b, c] = await Promise.all([call(bob.ctx, "respond_approval", { request_id: req.id, action: "approve" }), call(carol.ctx, "respond_approval", { request_id: req.id, action: "reject" })]);
    expect([b!.ok, c!.ok].filter(Boolean)).toHaveLength(1);
    const [won, lost] = b!.ok ? [b!, c!] : [c!, b!];
    const winner = b!.ok ? bob : carol;
    expect(lost.error).toMatchObject({ code: "conflict", message: `Approval request ${req.id} is already ${won.request.status}`, retryable: false });
    expect(await handoffRow(req.handoff_id)).toMatchObject({ responded_by: winner.id.actorId, status: "resolved" });
    expect(await count("SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ? AND actor_id = ? AND kind = 'response'", alice.tenantId, alice.actorId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'handoff.responded'", alice.tenantId)).toBe(1);
    expect(await planStatus(alice)).toBe(won.request.status === "approved" ? "approved" : "ready");
  });

  it("someone who is not an approver is forbidden, with a hint naming who may answer; nothing changes", async () => {
    const { alice, bob, carol } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"] });
    const err = await refusedWithoutWrites(carol.ctx, "respond_approval", { request_id: req.id, action: "approve" }, "forbidden", tenantState(alice.tenantId));
    expect(err.message).toBe(`You are not an approver of approval request ${req.id}.`);
    expect(err.hint).toContain(`bob (${bob.id.actorId})`);
  });

  it("the requester cannot answer their own request, whatever the action; nothing changes", async () => {
    const { alice, carol } = await team();
    const req = await request(alice, { approver_actor_ids: ["carol"] });
    for (const action of ["approve", "reject"]) {
      const err = await refusedWithoutWrites(alice, "respond_approval", { request_id: req.id, action }, "forbidden", tenantState(alice.tenantId));
      expect(err.message).toMatch(/nobody answers their own request/);
      expect(err.hint).toContain(`carol (${carol.id.actorId})`);
    }
  });

  it("a plan changed since the request: the approval is recorded, the plan's status is left, and a warning says it needs approving again", async () => {
    const { w, alice, bob } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"] });
    const step = await request(alice, { step_numbers: [3], approver_actor_ids: ["bob"] });
    await ok(alice, "save_plan", { plan: { ...PLAN, goal: `${PLAN.goal}, per client` }, overwrite: true });
    w.clock.advance(MINUTE);
    const r = await ok(bob.ctx, "respond_approval", { request_id: req.id, action: "approve" });
    expect(r).toMatchObject({ plan_status: "ready", request: { status: "approved", plan_version: 1 } });
    expect(r.warnings).toEqual([expect.stringMatching(/^Plan rate-limit changed since the request \(it was version 1, it is now 2\), so its status was left ready; it needs approving again\.$/)]);
    expect(await planStatus(alice)).toBe("ready");
    const s = await ok(bob.ctx, "respond_approval", { request_id: step.id, action: "approve" });
    expect(s.warnings).toEqual([expect.stringContaining("as they were in version 1")]);
    // The new version can be asked about afresh.
    expect((await request(alice, { approver_actor_ids: ["bob"] })).plan_version).toBe(2);
  });

  it("a plan already executing is left so, with a warning; a deleted plan's request is gone", async () => {
    const { alice, bob } = await team();
    const a = await request(alice, { approver_actor_ids: ["bob"] });
    await env.DB.prepare("UPDATE plans SET status = 'executing' WHERE tenant_id = ? AND id = ?").bind(alice.tenantId, PLAN.id).run();
    const r = await ok(bob.ctx, "respond_approval", { request_id: a.id, action: "approve" });
    expect(r).toMatchObject({ plan_status: "executing", warnings: [`Plan ${PLAN.id} is executing, so its status was left as it is.`] });

    const b = await request(alice, { step_numbers: [1], approver_actor_ids: ["bob"] });
    await ok(alice, "delete_plan", { plan_id: PLAN.id });
    // Deleting the plan took its requests with it (see "delete_plan and approvals").
    expect((await fails(bob.ctx, "respond_approval", { request_id: b.id, action: "reject" })).code).toBe("not_found");
  });

  it("an approval handoff answered with handoff_respond is still answered by respond_approval; a cancelled one is left, with a warning", async () => {
    const { alice, bob } = await team();
    const a = await request(alice, { approver_actor_ids: ["bob"] });
    await ok(bob.ctx, "handoff_respond", { handoff_id: a.handoff_id, response: { chosen_option: "approve" } });
    expect(await planStatus(alice)).toBe("ready");
    const r = await ok(bob.ctx, "respond_approval", { request_id: a.id, action: "approve" });
    expect(r.warnings).toBeUndefined();
    expect(await handoffRow(a.handoff_id)).toMatchObject({ status: "resolved", verdict: "approved" });
    expect(r.plan_status).toBe("approved");

    const b = await request(alice, { step_numbers: [2], approver_actor_ids: ["bob"] });
    await ok(alice, "handoff_resolve", { handoff_id: b.handoff_id, resolution: "cancelled" });
    const c = await ok(bob.ctx, "respond_approval", { request_id: b.id, action: "reject" });
    expect(c).toMatchObject({
      request: { status: "rejected" },
      warnings: [`The request's handoff ${b.handoff_id} was already cancelled, so it was left as it was and the requester was not notified through it.`],
    });
  });

  it("respond_approval: an unknown action, request_modification without modifications, modifications with another action, an unknown request", async () => {
    const { alice, bob } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"] });
    const state = tenantState(alice.tenantId);
    const action = await refusedWithoutWrites(bob.ctx, "respond_approval", { request_id: req.id, action: "accept" }, "invalid_input", state);
    expect(action.message).toMatch(/action/);
    for (const modifications of [undefined, "", "   "]) {
      const err = await refusedWithoutWrites(bob.ctx, "respond_approval", { request_id: req.id, action: "request_modification", modifications }, "invalid_input", state);
      expect(err.message).toBe("modifications is required when action is request_modification");
    }
    await refusedWithoutWrites(bob.ctx, "respond_approval", { request_id: req.id, action: "approve", modifications: "Add metrics." }, "invalid_input", state);
    await refusedWithoutWrites(bob.ctx, "respond_approval", { request_id: req.id, action: "approve", comment: "x".repeat(5_001) }, "invalid_input", state);
    const missing = await refusedWithoutWrites(bob.ctx, "respond_approval", { request_id: "nope", action: "approve" }, "not_found", state);
    expect(missing.message).toBe("Approval request nope not found");
  });
});

describe("list_approvals", () => {
  it("newest first, by plan and status, paged with a cursor", async () => {
    const { w, alice, bob } = await team();
    const made: string[] = [];
    for (const steps of [[1], [2], [3], [1, 2]]) {
      made.push((await request(alice, { step_numbers: steps, approver_actor_ids: ["bob"] })).id);
      w.clock.advance(MINUTE);
    }
    await ok(bob.ctx, "respond_approval", { request_id: made[1], action: "approve" });
    const first = await ok(alice, "list_approvals", { plan_id: PLAN.id, limit: 3 });
    const rest = await ok(alice, "list_approvals", { plan_id: PLAN.id, limit: 3, cursor: first.next_cursor });
    expect([...first.items, ...rest.items].map((a: Structured) => a.id)).toEqual([...made].reverse());
    expect(rest.next_cursor).toBeUndefined();
    expect((await ok(alice, "list_approvals", { status: "pending" })).items.map((a: Structured) => a.id)).toEqual([made[3], made[2], made[0]]);
  });

  describe("tenant isolation", () => {
    it("another tenant's plan, request and actors are not_found; its lists do not show them", async () => {
      const { alice, bob } = await team();
      const req = await request(alice, { approver_actor_ids: ["bob"] });
      const other = await newWorld("approvals-other", { start: START, actor: "bob" });
      const mine = tenantState(alice.tenantId);
      // The other tenant's "bob" is not alice's bob, and alice's plan is not theirs.
      await refusedWithoutWrites(other.ctx, "request_approval", { plan_id: PLAN.id, approver_actor_ids: [bob.id.actorId] }, "not_found", mine);
      await ok(other.ctx, "save_plan", { plan: PLAN });
      expect((await fails(other.ctx, "request_approval", { plan_id: PLAN.id, approver_actor_ids: [bob.id.actorId] })).code).toBe("not_found");
      const theirs = await other.other("dave");
      await refusedWithoutWrites(theirs.ctx, "respond_approval", { request_id: req.id, action: "approve" }, "not_found", mine);
      expect((await ok(other.ctx, "list_approvals", {})).items).toEqual([]);
      expect((await ok(other.ctx, "list_approvals", { plan_id: PLAN.id })).items).toEqual([]);
      await refusedWithoutWrites(alice, "request_approval", { plan_id: PLAN.id, step_numbers: [1], approver_actor_ids: [theirs.id.actorId] }, "not_found", mine);
    });
  });
});

describe("delete_plan", () => {
  it("takes the plan's requests with it and cancels a pending request's handoff, so it leaves the approver's inbox", async () => {
    const { alice, bob } = await team();
    const req = await request(alice, { approver_actor_ids: ["bob"] });
    expect((await ok(bob.ctx, "inbox", { kinds: ["approval"] })).items).toHaveLength(1);
    await ok(alice, "delete_plan", { plan_id: PLAN.id });
    expect((await ok(bob.ctx, "inbox", { kinds: ["approval"] })).items).toHaveLength(0);
    expect(await handoffRow(req.handoff_id as string)).toMatchObject({ status: "cancelled", resolution: "cancelled", resolution_note: "The plan was deleted." });
    expect(await count("SELECT COUNT(*) AS n FROM plan_approvals WHERE plan_id = ? AND tenant_id = (SELECT tenant_id FROM handoffs WHERE id = ?)", PLAN.id, req.handoff_id)).toBe(0);
    expect((await fails(bob.ctx, "respond_approval", { request_id: req.id, action: "approve" })).code).toBe("not_found");
  });
});
