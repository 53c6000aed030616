/**
 * The dashboard's plans pages: progress per plan and the approval requests waiting, one plan's steps
 * with who moved them and the task that tracks each, its approvals answered from the page (checked
 * through the tools afterwards), the three diagrams visualize_plan draws rendered as SVG, and
 * another tenant's plan or a malformed id as 404 or 400.
 */
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/time";
import { PLAN } from "../fixtures/plans";
import { hiddenField } from "../support/oauth-flow";
import { makeCtx, ok, seedIdentity } from "../support/helpers";
import { BASE, signedIn, textOf } from "../support/dashboard";

async function seed(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  const bo = await seedIdentity(tenant, "bo");
  const ctx = makeCtx(ada, systemClock);
  await ok(ctx, "save_plan", { plan: PLAN });
  await ok(ctx, "save_plan", { plan: { id: "tiny", goal: "A second, smaller plan", steps: [{ step_number: 1, title: "Only step" }] } });
  await ok(ctx, "start_step", { plan_id: PLAN.id, step_number: 1 });
  await ok(ctx, "complete_step", { plan_id: PLAN.id, step_number: 1, notes: "Limiter in place" });
  await ok(ctx, "start_step", { plan_id: PLAN.id, step_number: 3 });
  const ask = async (plan: string, note: string) => ((await ok(ctx, "request_approval", { plan_id: plan, approver_actor_ids: [bo.actorId], note })) as { request: { id: string } }).request.id;
  const request = await ask(PLAN.id, "Please look at the router step");
  // Steps have started on rate-limit, so only tiny (still ready) can become approved.
  const tinyRequest = await ask("tiny", "Small enough to approve");
  return { ada, bo, ctx, request, tinyRequest };
}

describe("dashboard plans", () => {
  it("lists plans with their progress and the approvals waiting, answerable by the approver only", async () => {
    const { ada, bo } = await seed("dash-plans-list");
    const asAda = await signedIn(ada.key);
    const page = await asAda.fetch(`${BASE}/app/plans`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const text = textOf(html);
    expect(html).toContain('aria-current="page">Plans');
    expect(text).toMatch(
      /Approvals waiting \(2\) tiny v1: .* \(the whole plan\) asked by ada .* approvers: bo Small enough to approve rate-limit v1: .* asked by ada .* approvers: bo Please look at the router step/,
    );
    // ada asked, so ada gets no form; bo does.
    expect(html).not.toContain('action="/app/approvals/');
    expect(html).toContain('href="/app/plans/rate-limit"');
    expect(text).toMatch(/Add Rate Limiting To The Public Api rate-limit v1 Add rate limiting to the public API executing 20% · 1\/5 done, 1 in progress, 1 ready/);
    expect(text).toMatch(/tiny v1 A second, smaller plan ready 0% · 0\/1 done, 1 ready/);
    const asBo = await (await signedIn(bo.key)).fetch(`${BASE}/app/plans`);
    expect(await asBo.text()).toContain('action="/app/approvals/');
  });

  it("shows one plan: steps with state and who, milestones, approvals, and the three diagrams drawn as SVG", async () => {
    const { ada } = await seed("dash-plans-one");
    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/plans/rate-limit`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const text = textOf(html);
    expect(text).toMatch(/Add Rate Limiting To The Public Api executing rate-limit v1 · changed \d+ s ago by ada Add rate limiting to the public API 20% · 1\/5 done, 1 in progress, 1 ready/);
    expect(text).toMatch(/1 Add a limiter module · 2-3 hours Limiter in place completed none ada · \d+ s ago/);
    expect(text).toMatch(/3 Document the limits · 30m in progress 1 started by ada/);
    expect(text).toMatch(/2 Wire it into the router · 1 day ready 1 not started/);
    expect(text).toMatch(/5 Announce · 1h 30m pending 4 not started/);
    expect(text).toMatch(/Milestones Core 1\/2 steps done \(steps 1, 2\) Polish 0\/2 steps done \(steps 3, 4\)/);
    expect(text).toMatch(/Approvals \(1 waiting\) pending v1: Approve plan: Add rate limiting to the public API \(the whole plan\) asked by ada/);
    for (const heading of ["Dependencies", "Schedule (Gantt)", "Files by directory"]) expect(text).toContain(heading);
    // Each diagram is an inline SVG, with the Mermaid source visualize_plan returned beside it.
    expect(html.match(/<svg[^>]*role="img"/g)?.length).toBeGreaterThanOrEqual(3);
    expect(html).toContain("flowchart TD");
    expect(html).toContain("gantt");
    expect(html).toContain("flowchart LR");
  });

  it("answers an approval from the plan page through respond_approval, and the plan is approved", async () => {
    const { bo, tinyRequest: request } = await seed("dash-plans-answer");
    const browser = await signedIn(bo.key);
    const page = await (await browser.fetch(`${BASE}/app/plans/tiny`)).text();
    expect(page).toContain(`action="/app/approvals/${request}/respond"`);
    const res = await browser.postForm(`${BASE}/app/approvals/${request}/respond`, {
      csrf: hiddenField(page, "csrf")!,
      back: "/app/plans/tiny",
      action: "approve",
      comment: "Looks right",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/app/plans/tiny");
    const after = textOf(await (await browser.fetch(`${BASE}/app/plans/tiny`)).text());
    expect(after).toContain("Approval request approved. The plan is approved.");
    expect(after).toMatch(/Approvals \(0 waiting\) approved v1: .* bo \d+ s ago: Looks right/);
    const listed = (await ok(makeCtx(bo, systemClock), "list_approvals", { plan_id: "tiny" })) as { items: Array<{ status: string; comment: string }> };
    expect(listed.items[0]).toMatchObject({ status: "approved", comment: "Looks right" });
    expect(((await ok(makeCtx(bo, systemClock), "load_plan", { plan_id: "tiny" })) as { meta: { status: string } }).meta.status).toBe("approved");
    // The other request still waits, on the list page.
    expect(textOf(await (await browser.fetch(`${BASE}/app/plans`)).text())).toMatch(/Approvals waiting \(1\) rate-limit/);
  });

  it("filters by status, answers another tenant's plan with 404 and a malformed id or status with 400", async () => {
    await seed("dash-plans-iso");
    const eve = await seedIdentity("dash-plans-iso-other", "eve");
    const browser = await signedIn(eve.key);
    const list = textOf(await (await browser.fetch(`${BASE}/app/plans`)).text());
    expect(list).toContain("No plans match.");
    expect(list).toContain("No approval request is waiting.");
    const foreign = await browser.fetch(`${BASE}/app/plans/rate-limit`);
    expect(foreign.status).toBe(404);
    expect(textOf(await foreign.text())).not.toContain("limiter");
    expect((await browser.fetch(`${BASE}/app/plans/${"x".repeat(300)}`)).status).toBe(400);
    expect((await browser.fetch(`${BASE}/app/plans?status=bogus`)).status).toBe(400);
    const { ada } = await seed("dash-plans-filter");
    const mine = await signedIn(ada.key);
    const approved = textOf(await (await mine.fetch(`${BASE}/app/plans?status=approved`)).text());
    expect(approved).toContain("No plans match.");
    const ready = textOf(await (await mine.fetch(`${BASE}/app/plans?status=ready`)).text());
    expect(ready).toContain("tiny");
  });
});
