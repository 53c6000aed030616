/** The dashboard's projects, project board and task page: lanes, filters, cards, the task's graph and evidence, tenancy, bad input. */
import { describe, expect, it } from "vitest";
import { BASE, call, send, signedIn, textOf } from "../support/dashboard";
import { seedIdentity } from "../support/helpers";

const SHA = "a".repeat(40);

/** task_create's task. */
const newTask = async (key: string, args: Record<string, unknown>) => (await call(key, "task_create", { project_id: "WEB", ...args })).task as { id: string; ref: string };

/** WEB with one task in each lane, a label, a code ref in acme/web, a one-step plan, a review and a comment. */
async function seeded(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  const bob = await seedIdentity(tenant, "bob");
  await call(ada.key, "project_create", { key: "WEB", title: "Website" });
  const base = await newTask(ada.key, { title: "Session store", labels: ["auth"], acceptance_criteria: [{ text: "Sessions survive a restart" }] });
  const waits = await newTask(ada.key, { title: "Expire sessions", depends_on: [base.id], labels: ["auth"], reviewer_actor_id: bob.actorId });
  const working = await newTask(ada.key, { title: "Rotate the signing key" });
  await call(bob.key, "task_claim", { task_id: working.id, lease_seconds: 1800 });
  const reviewing = await newTask(ada.key, { title: "Audit log page" });
  await call(ada.key, "task_update", { task_id: reviewing.id, patch: { status: "in_review" } });
  const finished = await newTask(ada.key, { title: "Sign-in form" });
  await call(ada.key, "task_update", { task_id: finished.id, patch: { status: "done" } });
  await call(ada.key, "repo_register", { slug: "acme/web" });
  await call(ada.key, "code_ref_add", { object_type: "task", object_id: waits.id, ref_type: "commit", repository_id: "acme/web", sha: SHA, title: "Expire idle sessions" });
  await call(ada.key, "attach_add", { object_type: "task", object_id: waits.id, kind: "link", url: "https://example.com/spec", title: "Session spec" });
  await call(ada.key, "comment_add", { object_type: "task", object_id: waits.id, body: "Twelve hours, not twenty-four." });
  const review = await call(ada.key, "handoff_create", { to_actor_ids: [bob.actorId], kind: "review", title: "Review the expiry", related_task_id: waits.id });
  await call(bob.key, "handoff_respond", { handoff_id: (review.handoff as { id: string }).id, response: { verdict: "changes_requested", text: "Add a test for the boundary." } });
  await call(ada.key, "save_plan", { plan: { id: "launch", goal: "Launch the site", steps: [{ step_number: 1, title: "Write the launch post" }] } });
  await call(ada.key, "plan_to_tasks", { plan_id: "launch", project_id: "WEB" });
  return { ada, bob, base, waits, working, reviewing, finished };
}

/** The cards of one lane, by their section's heading. */
function lane(html: string, id: string): string {
  const start = html.indexOf(`id="lane-${id}"`);
  expect(start, id).toBeGreaterThan(0);
  return textOf(html.slice(start, html.indexOf("</section>", start)));
}

describe("dashboard projects", () => {
  it("lists the tenant's projects with their counts, each linking to its board, and nothing of another tenant", async () => {
    const { ada } = await seeded("dash-board-list");
    const other = await seedIdentity("dash-board-list-other", "eve");
    await call(other.key, "project_create", { key: "SECRET", title: "Other tenant's project" });
    const res = await (await signedIn(ada.key)).fetch(`${BASE}/app/projects`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('href="/app/projects/WEB"');
    // to do 3 (WEB-1, WEB-2 and the plan's WEB-6), of which blocked 1 (WEB-2); in progress 1, in review 1, done 1.
    expect(textOf(html)).toMatch(/WEB Website active 3 1 1 1 1/);
    expect(html).not.toContain("SECRET");
  });
});

describe("dashboard board", () => {
  it("puts each task in its lane with counts, and cards show priority, assignee, lease and their dependencies' status", async () => {
    const { ada } = await seeded("dash-board-lanes");
    const res = await (await signedIn(ada.key)).fetch(`${BASE}/app/projects/WEB`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(lane(html, "ready")).toMatch(/^.*Ready 2 .*WEB-1 Session store P2 unassigned.*no open dependencies/);
    expect(lane(html, "ready")).toContain("Write the launch post");
    expect(lane(html, "blocked")).toMatch(/Blocked 1 .*WEB-2 Expire sessions .*blocked by WEB-1 \(to do\)/);
    expect(lane(html, "in_progress")).toMatch(/In progress 1 .*WEB-3 Rotate the signing key P2 bob · lease in (29|30) min/);
    expect(lane(html, "in_review")).toMatch(/In review 1 .*WEB-4 Audit log page/);
    expect(lane(html, "done")).toMatch(/Done 1 .*WEB-5 Sign-in form/);
    // A read-only session reads the same board; its only post form is signing out.
    const readonly = await (await signedIn(ada.key, true)).fetch(`${BASE}/app/projects/WEB`);
    expect(readonly.status).toBe(200);
    expect([...(await readonly.text()).matchAll(/method="post" action="([^"]*)"/g)].map((m) => m[1])).toEqual(["/app/signout"]);
  });

  it("filters by label, assignee, repository and plan, with a GET form that keeps the choice", async () => {
    const { ada } = await seeded("dash-board-filters");
    const browser = await signedIn(ada.key);
    const board = async (query: string) => {
      const res = await browser.fetch(`${BASE}/app/projects/WEB?${query}`);
      expect(res.status, query).toBe(200);
      return res.text();
    };
    const refs = (html: string) => [...html.matchAll(/<strong>(WEB-\d+)<\/strong>/g)].map((m) => m[1]).sort();
    expect(refs(await board("label=auth"))).toEqual(["WEB-1", "WEB-2"]);
    expect(refs(await board("assignee=unassigned&label=auth"))).toEqual(["WEB-1", "WEB-2"]);
    const bobs = await board("assignee=me");
    expect(refs(bobs)).toEqual([]);
    expect(refs(await board("repository=acme%2Fweb"))).toEqual(["WEB-2"]);
    const planned = await board("plan=launch");
    expect(refs(planned)).toEqual(["WEB-6"]);
    expect(planned).toMatch(/<option value="launch" selected="">/);
    expect(await board("label=nothing-has-this")).toContain("None.");
  });

  it("marks the lanes live: their fragment, with the page's filters, shows a task created after the page was drawn", async () => {
    const { ada } = await seeded("dash-board-live");
    const browser = await signedIn(ada.key);
    const page = await (await browser.fetch(`${BASE}/app/projects/WEB?label=auth`)).text();
    expect(page).toContain('<div class="lanes" id="lanes" data-live="/app/live/board/WEB?label=auth">');
    await newTask(ada.key, { title: "Log out everywhere", labels: ["auth"] });
    await newTask(ada.key, { title: "Unlabelled chore" });
    const fragment = await browser.fetch(`${BASE}/app/live/board/WEB?label=auth`);
    expect(fragment.status).toBe(200);
    const html = await fragment.text();
    expect(html).not.toContain("<html");
    expect(lane(html, "ready")).toMatch(/Ready 2 .*Session store.*Log out everywhere/);
    expect(html).not.toContain("Unlabelled chore");
    // Another tenant's board, a bad filter, and a signed-out fetch are statuses the script skips.
    const eve = await signedIn((await seedIdentity("dash-board-live-other", "eve")).key);
    expect((await eve.fetch(`${BASE}/app/live/board/WEB`)).status).toBe(404);
    expect((await browser.fetch(`${BASE}/app/live/board/WEB?plan=no-such-plan`)).status).toBe(400);
    expect((await send(`${BASE}/app/live/board/WEB`)).status).toBe(401);
  });

  it("answers 404 for another tenant's project and 400 for a filter value it does not know", async () => {
    await seeded("dash-board-bad");
    const eve = await seedIdentity("dash-board-bad-other", "eve");
    const browser = await signedIn(eve.key);
    const foreign = await browser.fetch(`${BASE}/app/projects/WEB`);
    expect(foreign.status).toBe(404);
    expect(textOf(await foreign.text())).toContain("Not found");
    await call(eve.key, "project_create", { key: "EVE", title: "Eve's" });
    for (const [query, says] of [
      ["assignee=nobody-at-all", "Unknown label or assignee"],
      ["label=not%20one%20word", "Unknown label or assignee"],
      ["repository=acme%2Fnowhere", "Unknown repository"],
      ["plan=no-such-plan", "Unknown plan"],
      [`label=${"x".repeat(201)}`, "longer than 200"],
    ] as const) {
      const res = await browser.fetch(`${BASE}/app/projects/EVE?${query}`);
      expect(res.status, query).toBe(400);
      expect(textOf(await res.text()), query).toContain(says);
    }
  });
});

describe("dashboard task page", () => {
  it("shows the task with its graph, gates, claim, comments, attachments, code refs linked to GitHub, reviews and activity", async () => {
    const { ada, base, waits } = await seeded("dash-task");
    const res = await (await signedIn(ada.key)).fetch(`${BASE}/app/tasks/${waits.id}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const body = textOf(html);
    expect(body).toContain("WEB-2 Expire sessions");
    // The graph: WEB-1 on the left linked to its page, this task in the middle, an arrow between.
    expect(html).toMatch(/<svg class="graph"[^>]*role="img"/);
    expect(html).toContain(`<a href="/app/tasks/${String(base.id)}"><g class="node node-todo">`);
    expect(html).toMatch(/<path class="edge edge-todo"/);
    expect(body).toContain("WEB-2 waits on 1 task(s); 0 task(s) wait on it.");
    expect(body).toMatch(/Waits on WEB-1 Session store to do/);
    expect(body).toContain("Open dependencies: WEB-1 (to do)");
    expect(body).toMatch(/Review by bob: resolved, changes_requested \(the verdict is changes_requested\)/);
    expect(body).toContain("Twelve hours, not twenty-four.");
    expect(html).toContain('<a href="https://example.com/spec">Session spec</a>');
    expect(html).toContain(`<a href="https://github.com/acme/web/commit/${SHA}">Expire idle sessions</a>`);
    expect(body).toContain("Add a test for the boundary.");
    expect(body).toContain("task.created");
  });

  it("shows the claim and its lease, and the criteria with their state", async () => {
    const { ada, working } = await seeded("dash-task-claim");
    const browser = await signedIn(ada.key);
    const claimed = textOf(await (await browser.fetch(`${BASE}/app/tasks/${working.id}`)).text());
    expect(claimed).toMatch(/Held by bob since \d+ s ago, lease in (29|30) min/);
    const byRef = await browser.fetch(`${BASE}/app/tasks/WEB-1`);
    expect(byRef.status).toBe(200);
    const first = textOf(await byRef.text());
    expect(first).toContain("☐ open: Sessions survive a restart");
    expect(first).toMatch(/Waited on by WEB-2 Expire sessions to do/);
    expect(first).toContain("Not claimed.");
  });

  it("answers 404 for another tenant's task and for an id that is no task, and 400 for one too long to be an id", async () => {
    const { waits } = await seeded("dash-task-bad");
    const eve = await seedIdentity("dash-task-bad-other", "eve");
    const browser = await signedIn(eve.key);
    for (const id of [String(waits.id), "WEB-2", "not-a-task"]) {
      const res = await browser.fetch(`${BASE}/app/tasks/${id}`);
      expect(res.status, id).toBe(404);
      const body = textOf(await res.text());
      expect(body).toContain("Not found");
      expect(body).not.toContain("Expire sessions");
    }
    const long = await browser.fetch(`${BASE}/app/tasks/${"x".repeat(150)}`);
    expect(long.status).toBe(400);
    expect(textOf(await long.text())).toContain("That request is not valid");
  });
});
