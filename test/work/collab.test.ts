/**
 * The work ledger's collab room (seed 001): comment_add and comment_query (mentions, threads),
 * activity_log and activity_query, notification_query and notification_mark_read, through the
 * registry against real local D1.
 */
import { describe, expect, it } from "vitest";
import { count, MINUTE, ok, type Structured } from "../support/helpers";
import { mintRun } from "../support/run-helpers";
import { activityRows, allPages, at, comment, decide, HOUR, ids, insertHandoff, notificationRows, project, rejects, sorted, T0, task, UUID_V7, world } from "../support/decisions-collab";

describe("comment_add", () => {
  it("comments on a project, a task, a decision and a work request, each recorded as comment.added on the right project", async () => {
    const w = await world("comment-objects");
    const api = await project(w.ctx, "API");
    const t = await task(w.ctx, api.id as string);
    const d = await decide(w.ctx, { project_id: api.id });
    const wide = await decide(w.ctx, {});
    const handoff = await insertHandoff(w.id.tenantId, w.id.actorId, api.id as string);

    const cases: Array<[string, string, string | null]> = [
      ["project", api.id as string, api.id as string],
      ["task", t.id as string, api.id as string],
      ["decision", d.id as string, api.id as string],
      ["decision", wide.id as string, null],
      ["work_request", handoff, api.id as string],
    ];
    for (const [type, objectId, projectId] of cases) {
      w.clock.advance(MINUTE);
      const r = await comment(w.ctx, type, objectId, `On the ${type}`);
      const c = r.comment as Structured;
      expect(c).toEqual({
        id: expect.stringMatching(UUID_V7),
        object_type: type,
        object_id: objectId,
        body: `On the ${type}`,
        author_actor_id: w.id.actorId,
        parent_comment_id: null,
        mentions: [],
        created_at: w.clock.now().toISOString(),
      });
      expect(r.notified).toEqual([]);
      const thread = await ok(w.ctx, "comment_query", { object_type: type, object_id: objectId });
      expect(thread.items).toEqual([c]);
      const acts = await activityRows(w.id.tenantId, "verb = 'comment.added' AND object_id = ?", objectId);
      expect(acts).toHaveLength(1);
      expect(acts[0]).toMatchObject({ object_type: type, project_id: projectId, summary: `On the ${type}` });
      expect(JSON.parse(acts[0]!.metadata as string)).toEqual({ comment_id: c.id });
    }
    expect(await notificationRows(w.id.tenantId)).toEqual([]);
  });

  it('mentions by "me", external_ref and id notify exactly those actors, once each', async () => {
    const w = await world("comment-mentions");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const dave = await w.other("dave");
    const d = await decide(w.ctx, {});

    const r = await comment(w.ctx, "decision", d.id as string, "@bob @carol please look", {
      mentions: ["me", "bob", carol.id.actorId, w.id.actorId, " bob ", "agent"],
    });
    const c = r.comment as Structured;
    const expected = sorted([w.id.actorId, bob.id.actorId, carol.id.actorId]);
    expect(sorted(r.notified as string[])).toEqual(expected);
    expect(sorted(c.mentions as string[])).toEqual(expected);

    const rows = await notificationRows(w.id.tenantId);
    expect(sorted(rows.map((n) => n.actor_id as string))).toEqual(expected);
    for (const n of rows) {
      expect(n).toMatchObject({ kind: "mention", object_type: "comment", object_id: c.id, from_actor_id: w.id.actorId, summary: "@bob @carol please look", created_at: T0, read_at: null });
    }
    expect(await notificationRows(w.id.tenantId, dave.id.actorId)).toEqual([]);
    const bobsView = await ok(bob.ctx, "notification_query", {});
    expect(bobsView.items).toHaveLength(1);
    expect(bobsView.items[0]).toMatchObject({ kind: "mention", object_id: c.id, from_actor_id: w.id.actorId });
    expect((await ok(dave.ctx, "notification_query", {})).items).toEqual([]);

    // The summary keeps the first 200 characters of a long body.
    const long = "x".repeat(500);
    await comment(w.ctx, "decision", d.id as string, long, { mentions: ["dave"] });
    expect((await notificationRows(w.id.tenantId, dave.id.actorId))[0]!.summary).toBe(long.slice(0, 200));
  });

  it("an unknown mention (or another tenant's actor) is not_found and writes no comment, notification or activity", async () => {
    const w = await world("comment-badmention");
    const stranger = await world("comment-stranger");
    await w.other("bob");
    const api = await project(w.ctx, "API");

    const e = await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: ["bob", "ghost"] }, "not_found");
    expect(e.message).toContain("ghost");
    expect(e.hint).toMatch(/actor_query/);
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: [stranger.id.actorId] }, "not_found");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: ["bob", "agent2"] }, "not_found");
    expect(await count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
    expect(await notificationRows(w.id.tenantId)).toEqual([]);
    expect(await notificationRows(stranger.id.tenantId)).toEqual([]);
  });

  it("threads replies through parent_comment_id; a parent on another object is invalid_input, an unknown one not_found", async () => {
    const w = await world("comment-threads");
    const bob = await w.other("bob");
    const api = await project(w.ctx, "API");
    const t = await task(w.ctx, api.id as string);

    const root = (await comment(w.ctx, "task", t.id as string, "Root")).comment as Structured;
    w.clock.advance(MINUTE);
    const reply = (await comment(bob.ctx, "task", t.id as string, "Reply", { parent_comment_id: root.id })).comment as Structured;
    w.clock.advance(MINUTE);
    const nested = (await comment(w.ctx, "task", t.id as string, "Reply to reply", { parentCommentId: reply.id })).comment as Structured;
    w.clock.advance(MINUTE);
    const second = (await comment(bob.ctx, "task", t.id as string, "Second root")).comment as Structured;

    const thread = (await ok(w.ctx, "comment_query", { object_type: "task", object_id: t.id })).items as Structured[];
    expect(thread.map((c) => [c.body, c.parent_comment_id, c.author_actor_id])).toEqual([
      ["Root", null, w.id.actorId],
      ["Reply", root.id, bob.id.actorId],
      ["Reply to reply", reply.id, w.id.actorId],
      ["Second root", null, bob.id.actorId],
    ]);
    expect(ids(thread)).toEqual([root.id, reply.id, nested.id, second.id]);

    const onProject = (await comment(w.ctx, "project", api.id as string, "Project note")).comment as Structured;
    const e = await rejects(w.ctx, "comment_add", { object_type: "task", object_id: t.id, body: "x", parent_comment_id: onProject.id }, "invalid_input");
    expect(e.hint).toMatch(/same object/);
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "x", parent_comment_id: root.id }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "task", object_id: t.id, body: "x", parent_comment_id: crypto.randomUUID() }, "not_found");
  });

  it("unknown objects of every type (notes included) are not_found with a hint; bad object types are refused", async () => {
    const w = await world("comment-objects-bad");
    const api = await project(w.ctx, "API");
    await comment(w.ctx, "project", api.id as string, "first");

    const note = await rejects(w.ctx, "comment_add", { object_type: "note", object_id: crypto.randomUUID(), body: "hi" }, "not_found");
    expect(note.hint).toMatch(/note/i);
    const q = await rejects(w.ctx, "comment_query", { object_type: "note", object_id: "n1" }, "not_found");
    expect(q.hint).toMatch(/note/i);

    for (const type of ["project", "task", "decision", "work_request", "note"]) {
      const e = await rejects(w.ctx, "comment_add", { object_type: type, object_id: "does-not-exist", body: "hi" }, "not_found");
      expect(e.message).toContain("does-not-exist");
      await rejects(w.ctx, "comment_query", { object_type: type, object_id: "does-not-exist" }, "not_found");
    }
    // A project id passed as a task id is not the task it claims to be.
    await rejects(w.ctx, "comment_add", { object_type: "task", object_id: api.id, body: "hi" }, "not_found");
    await rejects(w.ctx, "comment_add", { object_type: "file", object_id: api.id, body: "hi" }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "   " }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "x".repeat(20_001) }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: Array(21).fill("me") }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", author: "me" }, "invalid_input");
  });
});

describe("comment_query", () => {
  it("comment_query pages oldest first with a complete cursor and only the object's own comments", async () => {
    const w = await world("comment-pages");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    const posted: string[] = [];
    for (let i = 0; i < 5; i++) {
      posted.push(((await comment(w.ctx, "project", api.id as string, `c${i}`)).comment as Structured).id as string);
      await comment(w.ctx, "project", web.id as string, `web ${i}`);
      w.clock.advance(MINUTE);
    }
    const first = await ok(w.ctx, "comment_query", { object_type: "project", object_id: api.id, limit: 2 });
    expect(ids(first.items as Structured[])).toEqual(posted.slice(0, 2));
    const { items, pages } = await allPages(w.ctx, "comment_query", { object_type: "project", object_id: api.id, limit: 2 });
    expect(pages).toBe(3);
    expect(ids(items)).toEqual(posted);
    expect(items.map((c) => c.body)).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    await rejects(w.ctx, "comment_query", { object_type: "project", object_id: api.id, cursor: "garbage" }, "invalid_input");
  });
});

describe("comment_add", () => {
  it("a retried comment_add replays: one comment, one notification per mention", async () => {
    const w = await world("comment-replay");
    const bob = await w.other("bob");
    const api = await project(w.ctx, "API");
    const args = { object_type: "project", object_id: api.id, body: "ping", mentions: ["bob"] };
    const first = await ok(w.ctx, "comment_add", args);
    const again = await ok(w.ctx, "comment_add", args);
    expect(again.idempotent_replay).toBe(true);
    expect(again.comment).toEqual(first.comment);
    expect(await count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await notificationRows(w.id.tenantId, bob.id.actorId)).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe("activity_log", () => {
  it("appends verb, summary, severity and metadata (status kept in metadata, the run in run_id)", async () => {
    const w = await world("alog-basic");
    const api = await project(w.ctx, "API");
    const t = await task(w.ctx, api.id as string);
    const run = await mintRun(w.ctx);

    w.clock.advance(MINUTE);
    const r = await ok(w.ctx, "activity_log", {
      verb: "deploy.finished",
      summary: "Deployed v1.2 to production",
      severity: "warn",
      status: "green",
      run_id: run.run_key,
      metadata: { version: "1.2", regions: ["eu", "us"] },
    });
    expect(r.deduplicated).toBe(false);
    expect(r.activity).toEqual({
      id: expect.stringMatching(UUID_V7),
      at: at(MINUTE),
      actor_id: w.id.actorId,
      actor_name: "agent",
      verb: "deploy.finished",
      object_type: "",
      object_id: "",
      project_id: null,
      summary: "Deployed v1.2 to production",
      severity: "warn",
      session_id: "sess-1",
      run_id: run.id,
      metadata: { version: "1.2", regions: ["eu", "us"], status: "green" },
    });
    const row = (await activityRows(w.id.tenantId, "id = ?", r.activity.id))[0]!;
    expect(row.content_hash).toMatch(/^[0-9a-f]{64}$/);

    // On an object: the object's project is recorded, severity defaults to info.
    const onTask = await ok(w.ctx, "activity_log", { verb: "review.started", summary: "Looking at it", object_type: "task", object_id: t.id });
    expect(onTask.activity).toMatchObject({ object_type: "task", object_id: t.id, project_id: api.id, severity: "info", metadata: {} });
    const queried = await ok(w.ctx, "activity_query", { limit: 2 });
    expect(queried.items).toEqual([onTask.activity, r.activity]);
  });

  it("the same entry twice is de-duplicated to one row; a different summary, severity, object or actor is a new row", async () => {
    const w = await world("alog-dedup");
    const bob = await w.other("bob");
    const d = await decide(w.ctx, {});
    const entry = { verb: "deploy.finished", summary: "Deployed", metadata: { b: 2, a: 1 } };
    const hashed = () => count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND content_hash IS NOT NULL", w.id.tenantId);

    const first = await ok(w.ctx, "activity_log", entry);
    w.clock.advance(HOUR);
    const again = await ok(w.ctx, "activity_log", { ...entry, metadata: { a: 1, b: 2 } });
    expect(again.deduplicated).toBe(true);
    expect(again.activity).toEqual(first.activity);
    expect(await hashed()).toBe(1);

    const variants = [
      { ...entry, summary: "Deployed again" },
      { ...entry, severity: "critical" },
      { ...entry, object_type: "decision", object_id: d.id },
      { ...entry, metadata: { a: 1 } },
      { ...entry, status: "red" },
    ];
    for (const v of variants) expect((await ok(w.ctx, "activity_log", v)).deduplicated).toBe(false);
    expect((await ok(bob.ctx, "activity_log", entry)).deduplicated).toBe(false);
    expect(await hashed()).toBe(7);
    // And each of those, repeated, is recorded once.
    for (const v of variants) expect((await ok(w.ctx, "activity_log", v)).deduplicated).toBe(true);
    expect(await hashed()).toBe(7);
  });

  it("refuses an object type without an id, a bad verb, oversized metadata and unknown objects, writing nothing", async () => {
    const w = await world("alog-bad");
    const api = await project(w.ctx, "API");
    await ok(w.ctx, "activity_log", { verb: "x.y", summary: "something" });

    const pair = await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "project" }, "invalid_input");
    expect(pair.hint).toMatch(/both/i);
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_id: api.id }, "invalid_input");
    for (const verb of ["Deploy.Finished", "deploy finished", "deploy.", ".deploy", "deploy..x", "1deploy", "deploy-finished", "", "task.*"]) {
      await rejects(w.ctx, "activity_log", { verb, summary: "s" }, "invalid_input");
    }
    const big = await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", metadata: { blob: "x".repeat(8200) } }, "invalid_input");
    expect(big.message).toMatch(/8KB/);
    // Measured in bytes: 3,000 three-byte characters are 9,000 bytes.
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", metadata: { blob: "€".repeat(3000) } }, "invalid_input");
    expect((await ok(w.ctx, "activity_log", { verb: "x.y", summary: "s", metadata: { blob: "€".repeat(2000) } })).deduplicated).toBe(false);
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "task", object_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "note", object_id: "n" }, "not_found");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "  " }, "invalid_input");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", severity: "fatal" }, "invalid_input");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", actor_id: "me" }, "invalid_input");
  });
});

describe("activity_query", () => {
  it("filters by project, actor, object, verb (exact and family), run and time window, newest first", async () => {
    const w = await world("aq-filters");
    const bob = await w.other("bob");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    const t1 = await task(w.ctx, api.id as string, "first");
    w.clock.advance(HOUR);
    const claimed = await ok(bob.ctx, "task_claim", { project_id: "API" });
    expect(claimed.claimed).toBe(true);
    w.clock.advance(HOUR);
    const t2 = await task(w.ctx, web.id as string, "second");
    w.clock.advance(HOUR);
    const run9 = await mintRun(w.ctx);
    const tf = await ok(w.ctx, "activity_log", { verb: "taskforce.assembled", summary: "Gathered the team", run_id: run9.run_key });
    const bare = await ok(bob.ctx, "activity_log", { verb: "task", summary: "bare verb" });
    w.clock.advance(HOUR);
    const note = await ok(bob.ctx, "activity_log", { verb: "deploy.finished", summary: "shipped", object_type: "task", object_id: t1.id, run_id: run9.id });

    const all = (await ok(w.ctx, "activity_query", { limit: 200 })).items as Structured[];
    const seqs = await activityRows(w.id.tenantId);
    expect(ids(all)).toEqual(ids(seqs).reverse());

    const q = async (args: Record<string, unknown>) => (await ok(w.ctx, "activity_query", { limit: 200, ...args })).items as Structured[];
    const verbs = async (args: Record<string, unknown>) => (await q(args)).map((a) => a.verb as string);

    expect((await q({ project_id: "API" })).every((a) => a.project_id === api.id)).toBe(true);
    expect(await verbs({ project_id: "api" })).toEqual(["deploy.finished", "task.claimed", "task.created", "project.created"]);
    expect(await verbs({ project_id: web.id })).toEqual(["task.created", "project.created"]);

    const mine = await q({ actor_id: "me" });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((a) => a.actor_id === w.id.actorId)).toBe(true);
    expect(await verbs({ actor_id: "bob" })).toEqual(["deploy.finished", "task", "task.claimed"]);
    expect(await verbs({ actor_id: bob.id.actorId })).toEqual(["deploy.finished", "task", "task.claimed"]);

    expect(await verbs({ object_type: "task", object_id: t1.id })).toEqual(["deploy.finished", "task.claimed", "task.created"]);
    expect(ids(await q({ object_id: t2.id }))).toHaveLength(1);
    expect(await verbs({ object_type: "project" })).toEqual(["project.created", "project.created"]);

    expect(await verbs({ verb: "task.created" })).toEqual(["task.created", "task.created"]);
    expect(await verbs({ verb: "task.*" })).toEqual(["task.created", "task.claimed", "task.created"]);
    expect(await verbs({ verb: "task" })).toEqual(["task"]);
    expect(await verbs({ verb: "taskforce.*" })).toEqual(["taskforce.assembled"]);
    expect(await verbs({ verb: "task.cr" })).toEqual([]);

    expect(ids(await q({ run_id: run9.run_key }))).toEqual([note.activity.id, tf.activity.id]);
    expect(ids(await q({ run_id: run9.id }))).toEqual([note.activity.id, tf.activity.id]);
    expect(await q({ run_id: "run-0" })).toEqual([]);

    // Windows: the clock is at T0+4h now.
    expect(await verbs({ since: "90m" })).toEqual(["deploy.finished", "task", "taskforce.assembled"]);
    expect(await verbs({ since: at(HOUR), until: at(2 * HOUR) })).toEqual(["task.created", "task.claimed"]);
    expect(await verbs({ until: "3h" })).toEqual(["task.claimed", "task.created", "project.created", "project.created"]);
    expect(ids(await q({ since: "30m" }))).toEqual([note.activity.id]);
    expect(ids(await q({ since: "1h", until: "1h" }))).toEqual([bare.activity.id, tf.activity.id]);
    expect(await verbs({ since: "3h", verb: "task.*", actor_id: "me" })).toEqual(["task.created"]);
    expect(ids(await q({ since: "1h", actor_id: "me" }))).toEqual([tf.activity.id]);
    expect(ids(await q({ since: "30m", actor_id: "me" }))).toEqual([]);
  });

  it("pages newest first with a complete cursor; bad since/until, unknown project or actor are refused", async () => {
    const w = await world("aq-pages");
    const logged: string[] = [];
    for (let i = 0; i < 9; i++) {
      logged.push(((await ok(w.ctx, "activity_log", { verb: "step.done", summary: `step ${i}` })).activity as Structured).id as string);
      w.clock.advance(MINUTE);
    }
    const first = await ok(w.ctx, "activity_query", { limit: 4 });
    expect(ids(first.items as Structured[])).toEqual([...logged].reverse().slice(0, 4));
    const { items, pages } = await allPages(w.ctx, "activity_query", { limit: 4 });
    expect(pages).toBe(3);
    expect(ids(items)).toEqual([...logged].reverse());
    expect(new Set(ids(items)).size).toBe(9);
    const filtered = await allPages(w.ctx, "activity_query", { limit: 2, verb: "step.*", since: "5m" });
    expect(ids(filtered.items)).toEqual([...logged].reverse().slice(0, 5));

    for (const bound of ["since", "until"]) {
      const e = await rejects(w.ctx, "activity_query", { [bound]: "last tuesday" }, "invalid_input");
      expect(e.message).toContain("last tuesday");
    }
    await rejects(w.ctx, "activity_query", { since: "2030-13-01" }, "invalid_input");
    await rejects(w.ctx, "activity_query", { project_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "activity_query", { actor_id: "ghost" }, "not_found");
    await rejects(w.ctx, "activity_query", { cursor: "bogus" }, "invalid_input");
    await rejects(w.ctx, "activity_query", { limit: 201 }, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

describe("notification_query", () => {
  it("notification_query shows only your own, newest first, with unread_only and unread_count; cursor pages them", async () => {
    const w = await world("notif-own");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const api = await project(w.ctx, "API");

    const toBob: string[] = [];
    for (let i = 0; i < 4; i++) {
      toBob.push(((await comment(w.ctx, "project", api.id as string, `for bob ${i}`, { mentions: ["bob"] })).comment as Structured).id as string);
      w.clock.advance(MINUTE);
    }
    await comment(bob.ctx, "project", api.id as string, "for carol", { mentions: ["carol"] });

    const bobs = await ok(bob.ctx, "notification_query", {});
    expect((bobs.items as Structured[]).map((n) => n.object_id)).toEqual([...toBob].reverse());
    expect(bobs.unread_count).toBe(4);
    expect(bobs.next_cursor).toBeUndefined();
    expect(bobs.items[0]).toEqual({
      id: expect.stringMatching(UUID_V7),
      kind: "mention",
      object_type: "comment",
      object_id: toBob[3],
      summary: "for bob 3",
      from_actor_id: w.id.actorId,
      created_at: at(3 * MINUTE),
      read_at: null,
    });

    const carols = await ok(carol.ctx, "notification_query", {});
    expect(carols.items).toHaveLength(1);
    expect(carols.unread_count).toBe(1);
    expect(carols.items[0].from_actor_id).toBe(bob.id.actorId);
    const mine = await ok(w.ctx, "notification_query", {});
    expect(mine.items).toEqual([]);
    expect(mine.unread_count).toBe(0);

    // Read two of bob's; unread_only and unread_count follow.
    w.clock.advance(HOUR);
    const marked = await ok(bob.ctx, "notification_mark_read", { ids: [bobs.items[0].id, bobs.items[2].id] });
    expect(marked.marked).toBe(2);
    const unread = await ok(bob.ctx, "notification_query", { unread_only: true });
    expect(ids(unread.items as Structured[])).toEqual([bobs.items[1].id, bobs.items[3].id]);
    expect(unread.unread_count).toBe(2);
    const after = await ok(bob.ctx, "notification_query", {});
    expect(after.items[0].read_at).toBe(w.clock.now().toISOString());
    expect(after.items[1].read_at).toBeNull();

    const { items, pages } = await allPages(bob.ctx, "notification_query", { limit: 3 });
    expect(pages).toBe(2);
    expect(ids(items)).toEqual(ids(bobs.items as Structured[]));
    const unreadPages = await allPages(bob.ctx, "notification_query", { limit: 1, unread_only: true });
    expect(ids(unreadPages.items)).toEqual(ids(unread.items as Structured[]));
    await rejects(bob.ctx, "notification_query", { recipient: "carol" }, "invalid_input");
  });
});

describe("notification_mark_read", () => {
  it("notification_mark_read marks only your own ids, counts the changed ones, and is idempotent", async () => {
    const w = await world("notif-mark");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const api = await project(w.ctx, "API");
    await comment(w.ctx, "project", api.id as string, "hey both", { mentions: ["bob", "carol"] });
    const bobN = (await ok(bob.ctx, "notification_query", {})).items[0].id as string;
    const carolN = (await ok(carol.ctx, "notification_query", {})).items[0].id as string;

    expect((await ok(bob.ctx, "notification_mark_read", { ids: [carolN] })).marked).toBe(0);
    expect((await notificationRows(w.id.tenantId, carol.id.actorId))[0]!.read_at).toBeNull();
    expect((await ok(carol.ctx, "notification_query", {})).unread_count).toBe(1);

    expect((await ok(bob.ctx, "notification_mark_read", { ids: [bobN, carolN, crypto.randomUUID()] })).marked).toBe(1);
    expect((await ok(bob.ctx, "notification_mark_read", { ids: [bobN] })).marked).toBe(0);
    expect((await ok(bob.ctx, "notification_mark_read", { ids: [bobN, bobN] })).marked).toBe(0);
    expect((await notificationRows(w.id.tenantId, bob.id.actorId))[0]!.read_at).toBe(T0);
    expect((await notificationRows(w.id.tenantId, carol.id.actorId))[0]!.read_at).toBeNull();

    await rejects(bob.ctx, "notification_mark_read", { ids: [] }, "invalid_input");
    await rejects(bob.ctx, "notification_mark_read", {}, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------

describe("follow-ups", () => {
  it("comments and activity accept task refs and project keys, stored under the canonical id", async () => {
    const w = await world("refs");
    const project = (await ok(w.ctx, "project_create", { title: "Refs", key: "REF" })).project as Structured;
    const task = (await ok(w.ctx, "task_create", { project_id: "REF", title: "t" })).task as Structured;
    const onTask = await ok(w.ctx, "comment_add", { object_type: "task", object_id: "ref-1", body: "by ref" });
    expect(onTask.comment.object_id).toBe(task.id);
    const onProject = await ok(w.ctx, "comment_add", { object_type: "project", object_id: "REF", body: "by key" });
    expect(onProject.comment.object_id).toBe(project.id);
    expect((await ok(w.ctx, "comment_query", { object_type: "task", object_id: task.id })).items).toHaveLength(1);
    const logged = await ok(w.ctx, "activity_log", { verb: "note.taken", summary: "by ref", object_type: "task", object_id: "REF-1" });
    expect(logged.activity).toMatchObject({ object_id: task.id, project_id: project.id });
  });
});
