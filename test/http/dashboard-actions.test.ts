/**
 * The dashboard's human actions: the inbox page, answering handoffs, reviews and approvals,
 * marking notifications read, commenting on, reassigning and releasing tasks, overseer messages.
 * Each change is checked through the tools afterwards; CSRF, read-only sessions, other tenants'
 * ids and malformed ids are refused.
 */
import { describe, expect, it } from "vitest";
import { backPath, mentionsIn } from "../../src/http/dashboard-actions";
import { attempt, BASE, call, signedIn, textOf } from "../support/dashboard";
import { seedIdentity } from "../support/helpers";
import type { Browser } from "../support/oauth-flow";

type Row = Record<string, unknown>;

/** Posts a dashboard form as the page would, with the session's CSRF token. */
const post = (browser: Browser, path: string, fields: Record<string, string>, origin?: string) =>
  browser.postForm(`${BASE}${path}`, { csrf: browser.cookies.get("__Host-ledger-csrf")!, ...fields }, origin);

/** Follows a form's redirect and answers the page it lands on, as text. */
async function landed(browser: Browser, res: Response, at: string): Promise<string> {
  expect(res.status, await res.clone().text()).toBe(303);
  expect(res.headers.get("Location")).toBe(at);
  const page = await browser.fetch(`${BASE}${at}`);
  return textOf(await page.text());
}

const PLAN = { id: "rollout", goal: "Roll the session change out", steps: [{ step_number: 1, title: "Ship behind a flag" }] };

/** ada's tenant: bob asks her a question, has her review his task, asks her to approve a plan, and mentions her. */
async function team(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  const bob = await seedIdentity(tenant, "bob");
  await call(ada.key, "project_create", { key: "WEB", title: "Website" });
  const question = (await call(bob.key, "handoff_create", { to_actor_ids: ["ada"], kind: "question", title: "Which cookie name?", options: ["ledger", "session"], allow_free_text: true }))
    .handoff as Row;
  const task = (await call(bob.key, "task_create", { project_id: "WEB", title: "Sessions expire after 12 hours", reviewer_actor_id: "ada" })).task as Row;
  await call(bob.key, "task_claim", { task_id: task.ref, lease_seconds: 1800 });
  const moved = await call(bob.key, "task_update", { task_id: task.ref, patch: { status: "in_review" } });
  const review = (moved.review_handoff as Row).id as string;
  await call(bob.key, "save_plan", { plan: PLAN, name: "Rollout" });
  const approval = (await call(bob.key, "request_approval", { plan_id: PLAN.id, approver_actor_ids: ["ada"] })).request as Row;
  await call(bob.key, "comment_add", { object_type: "task", object_id: task.ref, body: "@ada have a look", mentions: ["ada"] });
  return { ada, bob, question: question.id as string, task: task.ref as string, review, approval };
}

describe("dashboard inbox", () => {
  it("lists the person's handoffs, review and approval with their forms, and their notifications, of their tenant only", async () => {
    const t = await team("dash-inbox");
    const eve = await seedIdentity("dash-inbox-other", "eve");
    await call(eve.key, "handoff_create", { to_actor_ids: ["me"], title: "Other tenant's secret question" });
    const browser = await signedIn(t.ada.key);
    const res = await browser.fetch(`${BASE}/app/inbox`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const body = textOf(html);
    expect(body).toContain("Handoffs, reviews and approvals (3)");
    expect(body).toMatch(/question Which cookie name\? From bob/);
    expect(body).toContain(`Review ${t.task}: Sessions expire after 12 hours`);
    expect(body).toContain("Plan rollout, version 1");
    expect(body).toMatch(/Notifications \(\d+ unread\)/);
    expect(body).toContain("Mark all shown read");
    expect(html).toContain(`action="/app/handoffs/${t.question}/respond"`);
    expect(html).toContain(`action="/app/handoffs/${t.review}/respond"`);
    expect(html).toContain(`action="/app/approvals/${t.approval.id}/respond"`);
    expect(html).toContain('name="verdict" value="approved"');
    expect(body).not.toContain("secret");
    // Not an operator: no overseer form.
    expect(html).not.toContain('action="/app/overseer"');
  });

  it("answers a question: the asker reads the answer through the tools, and it leaves the inbox", async () => {
    const t = await team("dash-answer");
    const browser = await signedIn(t.ada.key);
    const page = await landed(browser, await post(browser, `/app/handoffs/${t.question}/respond`, { back: "/app/inbox", option: "ledger", text: "Keep the prefix" }), "/app/inbox");
    expect(page).toContain("Answered: Which cookie name?");
    expect(page).not.toContain("question Which cookie name?");
    const mine = (await call(t.bob.key, "handoff_query", { direction: "from_me", type: ["question"] })).items as Row[];
    expect(mine[0]).toMatchObject({ status: "responded", response: { chosen_option: "ledger", text: "Keep the prefix" } });
    // The flash is shown once.
    expect(textOf(await (await browser.fetch(`${BASE}/app/inbox`)).text())).not.toContain("Answered");
  });

  it("an answer the tool refuses comes back with its message and hint, and changes nothing", async () => {
    const t = await team("dash-refused");
    const browser = await signedIn(t.ada.key);
    const page = await landed(browser, await post(browser, `/app/handoffs/${t.review}/respond`, { text: "looks fine" }), "/app/inbox");
    expect(page).toContain("A review handoff is answered with a verdict.");
    expect(page).toContain("Set response.verdict to approved");
    const reviews = (await call(t.bob.key, "handoff_query", { direction: "from_me", type: ["review"] })).items as Row[];
    expect(reviews[0]!.status).toBe("open");
  });

  it("approving a review unlocks done; rejecting one sends the task back to in progress", async () => {
    const t = await team("dash-review");
    const browser = await signedIn(t.ada.key);
    const before = await attempt(t.bob.key, "task_update", { task_id: t.task, patch: { status: "done" } });
    expect(before.error).toMatchObject({ code: "review_pending" });
    const page = await landed(browser, await post(browser, `/app/handoffs/${t.review}/respond`, { verdict: "approved", text: "ship it" }), "/app/inbox");
    expect(page).toContain("Review answered: approved.");
    const done = await call(t.bob.key, "task_update", { task_id: t.task, patch: { status: "done" } });
    expect((done.task as Row).status).toBe("done");

    const again = await team("dash-review-reject");
    const other = await signedIn(again.ada.key);
    await landed(other, await post(other, `/app/handoffs/${again.review}/respond`, { verdict: "rejected", text: "not yet" }), "/app/inbox");
    const task = (await call(again.bob.key, "task_get", { task_id: again.task })).task as Row;
    expect(task.status).toBe("in_progress");
  });

  it("answers a plan's approval request: the plan is approved and the requester sees it", async () => {
    const t = await team("dash-approve");
    const browser = await signedIn(t.ada.key);
    const page = await landed(browser, await post(browser, `/app/approvals/${t.approval.id}/respond`, { action: "approve", comment: "go" }), "/app/inbox");
    expect(page).toContain("Approval request approved. The plan is approved.");
    expect(page).not.toContain("Plan rollout, version 1");
    const listed = (await call(t.bob.key, "list_approvals", { plan_id: PLAN.id })).items as Row[];
    expect(listed[0]).toMatchObject({ status: "approved", comment: "go" });
    const missing = await landed(browser, await post(browser, `/app/approvals/${t.approval.id}/respond`, { action: "reject" }), "/app/inbox");
    expect(missing).toContain("already approved");
  });

  it("marks notifications read", async () => {
    const t = await team("dash-notices");
    const before = (await call(t.ada.key, "notification_query", {})) as Row;
    expect(before.unread_count).toBeGreaterThan(0);
    const browser = await signedIn(t.ada.key);
    const ids = (before.items as Row[]).map((n) => String(n.id));
    const form = new URLSearchParams({ csrf: browser.cookies.get("__Host-ledger-csrf")!, back: "/app/inbox" });
    for (const id of ids) form.append("id", id);
    const res = await browser.fetch(`${BASE}/app/notifications/read`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: BASE }, body: form.toString() });
    expect(await landed(browser, res, "/app/inbox")).toContain(`${ids.length} notification(s) marked read.`);
    expect(((await call(t.ada.key, "notification_query", {})) as Row).unread_count).toBe(0);
  });

  it("refuses a form without its CSRF token or from another site, and any form of a read-only session, changing nothing", async () => {
    const t = await team("dash-guards");
    const browser = await signedIn(t.ada.key);
    const bare = await browser.postForm(`${BASE}/app/handoffs/${t.question}/respond`, { text: "x" });
    expect(bare.status).toBe(403);
    expect(textOf(await bare.text())).toContain("The form expired or came from another site.");
    expect((await post(browser, `/app/handoffs/${t.question}/respond`, { text: "x" }, "https://evil.example")).status).toBe(403);

    const readonly = await signedIn(t.ada.key, true);
    const page = await (await readonly.fetch(`${BASE}/app/inbox`)).text();
    expect(page).toContain("Which cookie name?");
    expect(page).not.toContain('method="post" action="/app/handoffs');
    const refused = await post(readonly, `/app/handoffs/${t.question}/respond`, { text: "x" });
    expect(refused.status).toBe(403);
    expect(textOf(await refused.text())).toContain("This session is read-only");
    expect((await post(readonly, `/app/tasks/${t.task}/comment`, { body: "x" })).status).toBe(403);
    const asked = (await call(t.bob.key, "handoff_query", { direction: "from_me", type: ["question"] })).items as Row[];
    expect(asked[0]!.status).toBe("open");
  });

  it("another tenant's handoff or approval is not found; a malformed id is a bad request", async () => {
    const t = await team("dash-tenancy");
    const eve = await seedIdentity("dash-tenancy-other", "eve");
    const browser = await signedIn(eve.key);
    const handoff = await post(browser, `/app/handoffs/${t.question}/respond`, { text: "mine now" });
    expect(handoff.status).toBe(404);
    expect(textOf(await handoff.text())).toContain("Not found");
    expect((await post(browser, `/app/approvals/${t.approval.id}/respond`, { action: "approve" })).status).toBe(404);
    expect((await post(browser, `/app/handoffs/${t.question}/ack`, {})).status).toBe(404);
    expect((await post(browser, `/app/tasks/${t.task}/comment`, { body: "hello" })).status).toBe(404);
    const bad = await post(browser, `/app/handoffs/${"x".repeat(101)}/respond`, { text: "x" });
    expect(bad.status).toBe(400);
    expect(textOf(await bad.text())).toContain("That is not an id this server gives out.");
    expect((await post(browser, "/app/tasks/%3Cscript%3E/release", {})).status).toBe(400);
    const asked = (await call(t.bob.key, "handoff_query", { direction: "from_me", type: ["question"] })).items as Row[];
    expect(asked[0]!.status).toBe("open");
  });
});

describe("dashboard task actions", () => {
  it("comments with @mentions: the comment is on the task and the mentioned actor is told", async () => {
    const t = await team("dash-comment");
    const browser = await signedIn(t.ada.key);
    const page = await landed(browser, await post(browser, `/app/tasks/${t.task}/comment`, { back: "/app/inbox", body: "Looks right, @bob. Ship it!" }), "/app/inbox");
    expect(page).toContain(`Commented on ${t.task}; 1 actor(s) notified.`);
    const comments = (await call(t.bob.key, "comment_query", { object_type: "task", object_id: t.task })).items as Row[];
    expect(comments.map((c) => c.body)).toContain("Looks right, @bob. Ship it!");
    const told = (await call(t.bob.key, "notification_query", { unread_only: true })).items as Row[];
    expect(told.some((n) => n.kind === "mention" && n.from_actor_id === t.ada.actorId)).toBe(true);
    const unknown = await landed(browser, await post(browser, `/app/tasks/${t.task}/comment`, { back: "/app/inbox", body: "cc @nobody" }), "/app/inbox");
    expect(unknown).toMatch(/actor.*nobody.*not found/i);
  });

  it("reassigns a task, and releases one: another person cannot while its holder's lease is live, an operator can with a reason", async () => {
    const t = await team("dash-assign");
    const task = ((await call(t.bob.key, "task_create", { project_id: "WEB", title: "Rotate the signing key" })).task as Row).ref as string;
    await call(t.bob.key, "task_claim", { task_id: task, lease_seconds: 1800 });
    const browser = await signedIn(t.ada.key);
    const held = await landed(browser, await post(browser, `/app/tasks/${task}/release`, { back: "/app/inbox" }), "/app/inbox");
    expect(held).toContain(`${task} is leased to bob (${t.bob.actorId}) until`);
    expect(held).toContain("only the holder may change it until then");
    expect(held).not.toContain("back in the pool");
    expect((await call(t.bob.key, "task_get", { task_id: task })).task as Row).toMatchObject({ status: "in_progress", assignee_actor_id: t.bob.actorId });

    const boss = await seedIdentity("dash-assign", "boss", { operator: true });
    const operator = await signedIn(boss.key);
    const forced = await landed(operator, await post(operator, `/app/tasks/${task}/release`, { back: "/app/inbox", force: "1", reason: "bob is stuck" }), "/app/inbox");
    expect(forced).toContain(`${task} is back in the pool.`);
    expect((await call(t.bob.key, "task_get", { task_id: task })).task as Row).toMatchObject({ status: "todo", assignee_actor_id: null });

    const assigned = await landed(browser, await post(browser, `/app/tasks/${task}/assign`, { back: "/app/inbox", assignee: "bob" }), "/app/inbox");
    expect(assigned).toContain(`${task} is assigned to bob.`);
    expect(((await call(t.bob.key, "task_get", { task_id: task })).task as Row).assignee_actor_id).toBe(t.bob.actorId);
    await landed(browser, await post(browser, `/app/tasks/${task}/assign`, { back: "/app/inbox", assignee: "" }), "/app/inbox");
    expect(((await call(t.bob.key, "task_get", { task_id: task })).task as Row).assignee_actor_id).toBeNull();
  });

  it("a form with no back path returns to the task page; one naming another site returns there too", async () => {
    const t = await team("dash-back");
    const browser = await signedIn(t.ada.key);
    const res = await post(browser, `/app/tasks/${t.task}/comment`, { body: "one", back: "https://evil.example/app" });
    expect(res.headers.get("Location")).toBe(`/app/tasks/${t.task}`);
  });
});

describe("dashboard overseer message", () => {
  it("an operator interrupts an agent from its card on the overview; the message tops the agent's notifications", async () => {
    const t = await team("dash-overseer");
    const boss = await seedIdentity("dash-overseer", "boss", { operator: true });
    const next = (await call(t.bob.key, "task_create", { project_id: "WEB", title: "Rotate the signing key" })).task as Row;
    await call(t.bob.key, "task_claim", { task_id: next.ref, lease_seconds: 600 });
    const browser = await signedIn(boss.key);
    const html = await (await browser.fetch(`${BASE}/app`)).text();
    expect(html).toContain('action="/app/overseer"');
    expect(html).toContain(`name="to" value="${t.bob.actorId}"`);
    const page = await landed(browser, await post(browser, "/app/overseer", { back: "/app", to: t.bob.actorId, message: "Stop and rebase on main" }), "/app");
    expect(page).toContain("Overseer message delivered to 1 agent(s)");
    const told = (await call(t.bob.key, "notification_query", {})).items as Row[];
    expect(told[0]).toMatchObject({ kind: "overseer", summary: "Stop and rebase on main", from_actor_id: boss.actorId });
    // The inbox offers the same message to any agent of the tenant.
    const inbox = await (await browser.fetch(`${BASE}/app/inbox`)).text();
    expect(textOf(inbox)).toContain("Interrupt an agent");
    expect(inbox).toContain(`<option value="${t.bob.actorId}">bob</option>`);
  });

  it("a person without an operator key gets no overseer form, and the tool refuses their post", async () => {
    const t = await team("dash-overseer-no");
    const browser = await signedIn(t.ada.key);
    expect(await (await browser.fetch(`${BASE}/app`)).text()).not.toContain('action="/app/overseer"');
    const page = await landed(browser, await post(browser, "/app/overseer", { to: t.bob.actorId, message: "Stop" }), "/app");
    expect(page).toContain("this key is not an operator key");
    expect(((await call(t.bob.key, "notification_query", {})).items as Row[]).some((n) => n.kind === "overseer")).toBe(false);
  });
});

describe("dashboard action helpers", () => {
  it("reads @mentions without trailing punctuation, each once, at most 20", () => {
    expect(mentionsIn("Thanks @bob, and @carol! cc @bob. mail a@b.c @")).toEqual(["bob", "carol"]);
    expect(mentionsIn(Array.from({ length: 30 }, (_, i) => `@a${i}`).join(" "))).toHaveLength(20);
  });

  it("returns only to the dashboard's own paths", () => {
    expect(backPath("/app/tasks/WEB-1?x=1", "/app")).toBe("/app/tasks/WEB-1?x=1");
    for (const evil of ["//evil.example/app", "https://evil.example/app", "/app\\@evil", "/apple", "/other", "", "/app/" + "x".repeat(600)]) expect(backPath(evil, "/app/inbox")).toBe("/app/inbox");
  });
});
