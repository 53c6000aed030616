/**
 * The handoffs room of the work ledger (seed 001): handoff_create (recipients, kinds, options,
 * due_at, related task/project, notifications, fingerprint de-duplication of live handoffs),
 * handoff_claim through the ClaimsDO (exactly one recipient wins), handoff_respond,
 * handoff_resolve, handoff_query, the ack-after-act inbox and whoami's inbox count, the review
 * gate of task_update end to end, and tenant isolation, through the registry against real local
 * D1 and Durable Objects.
 *
 * Each test has its own tenant because D1 keeps rows between the tests of this file. The clock
 * sits in 2030 and is moved by hand, so creation order is time order where a test needs it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { claimHandoff } from "../../src/work/claims/model";
import { HANDOFF_KINDS } from "../../src/work/handoffs/model";
import { call, count, fails, MINUTE, ok, refusedWithoutWrites, type Structured, newWorld, type World, type Who } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const at = (ms: number, base = T0) => new Date(Date.parse(base) + ms).toISOString();
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A fresh tenant with one caller ("alice" unless named) and a clock at T0. */
const world = (name: string, actor = "alice"): Promise<World> => newWorld(`wh-${name}`, { start: T0, actor, sessionId: `sess-${actor}` });

async function create(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  const r = await ok(ctx, "handoff_create", { title: "Please look", ...args });
  expect(r.deduplicated).toBe(false);
  return r.handoff as Structured;
}

async function query(ctx: Ctx, args: Record<string, unknown> = {}): Promise<Structured[]> {
  return (await ok(ctx, "handoff_query", { limit: 200, ...args })).items as Structured[];
}

async function handoffRow(id: string): Promise<Structured> {
  const row = await env.DB.prepare("SELECT * FROM handoffs WHERE id = ?").bind(id).first<Structured>();
  if (!row) throw new Error(`no handoff row ${id}`);
  return row;
}

async function rows(sql: string, ...params: unknown[]): Promise<Structured[]> {
  return (
    await env.DB.prepare(sql)
      .bind(...params)
      .all<Structured>()
  ).results;
}

const recipientsOf = async (handoffId: string) => (await rows("SELECT actor_id FROM handoff_recipients WHERE handoff_id = ? ORDER BY actor_id", handoffId)).map((r) => r.actor_id as string);
const notificationsFor = (tenantId: string, objectId: string) => rows("SELECT * FROM notifications WHERE tenant_id = ? AND object_id = ? ORDER BY seq", tenantId, objectId);
const activityOf = (tenantId: string, objectId: string) => rows("SELECT * FROM activity WHERE tenant_id = ? AND object_id = ? ORDER BY seq", tenantId, objectId);
const verbsOf = async (tenantId: string, objectId: string) => (await activityOf(tenantId, objectId)).map((a) => a.verb as string);
const ids = (items: Structured[]) => items.map((h) => h.id as string);
const sorted = (xs: string[]) => [...xs].sort();

/** Everything the handoff tools write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  const text = (sql: string) =>
    env.DB.prepare(sql)
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? "");
  return {
    handoffs: await text(
      `SELECT group_concat(id || ':' || kind || ':' || status || ':' || ifnull(claimed_by, '-') || ':' || ifnull(response, '-') || ':' ||
         ifnull(responded_by, '-') || ':' || ifnull(resolution, '-') || ':' || resolution_note || ':' || ifnull(fingerprint, '-') || ':' || updated_at, '|') AS s
       FROM (SELECT * FROM handoffs WHERE tenant_id = ? ORDER BY id)`,
    ),
    recipients: await text(
      `SELECT group_concat(handoff_id || ':' || actor_id || ':' || ifnull(acked_at, '-'), '|') AS s FROM (SELECT * FROM handoff_recipients WHERE tenant_id = ? ORDER BY handoff_id, actor_id)`,
    ),
    notifications: await text(`SELECT group_concat(id || ':' || actor_id || ':' || kind, '|') AS s FROM (SELECT * FROM notifications WHERE tenant_id = ? ORDER BY seq)`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    tasks: await text(`SELECT group_concat(id || ':' || status || ':' || updated_at, '|') AS s FROM (SELECT * FROM tasks WHERE tenant_id = ? ORDER BY id)`),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

/** inbox and whoami agree on how much is waiting for `ctx`; returns the inbox answer. */
async function inboxAgrees(ctx: Ctx, args: Record<string, unknown> = {}): Promise<Structured> {
  const inbox = await ok(ctx, "inbox", args);
  const who = await ok(ctx, "whoami", {});
  expect(who.inbox.count).toBe(inbox.total);
  return inbox;
}

// ---------------------------------------------------------------------------------------------

describe("handoff_create", () => {
  it("to one recipient: returns the full handoff, one recipient row, a notification of the handoff's kind and handoff.created", async () => {
    const w = await world("create-one");
    const bob = await w.other("bob");
    const r = await ok(w.ctx, "handoff_create", {
      to_actor_ids: [bob.id.actorId],
      title: "  Which cache?  ",
      kind: "question",
      body: "Redis or KV for the session cache?",
      options: ["redis", { label: "kv", summary: "Workers KV" }, { label: "d1" }],
      allow_free_text: false,
      due_at: "2030-02-01",
    });
    expect(r.deduplicated).toBe(false);
    const h = r.handoff as Structured;
    expect(h.id).toMatch(UUID_V7);
    expect(h).toEqual({
      id: h.id,
      kind: "question",
      title: "Which cache?",
      body: "Redis or KV for the session cache?",
      from_actor_id: w.id.actorId,
      to_actor_ids: [bob.id.actorId],
      status: "open",
      claimed_by: null,
      options: [
        { label: "redis", summary: "" },
        { label: "kv", summary: "Workers KV" },
        { label: "d1", summary: "" },
      ],
      allow_free_text: false,
      response: null,
      responded_by: null,
      responded_at: null,
      verdict: null,
      resolution: null,
      resolution_note: "",
      related_task_id: null,
      related_project_id: null,
      due_at: "2030-02-01T00:00:00.000Z",
      fingerprint: null,
      created_at: T0,
      updated_at: T0,
      acked: false,
    });
    expect(await recipientsOf(h.id as string)).toEqual([bob.id.actorId]);
    const notes = await notificationsFor(w.id.tenantId, h.id as string);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ actor_id: bob.id.actorId, kind: "question", object_type: "work_request", summary: "Which cache?", from_actor_id: w.id.actorId, created_at: T0, read_at: null });
    const act = await activityOf(w.id.tenantId, h.id as string);
    expect(act).toHaveLength(1);
    expect(act[0]).toMatchObject({ verb: "handoff.created", object_type: "work_request", actor_id: w.id.actorId, at: T0, session_id: "sess-alice", summary: "question: Which cache?" });
    // The recipient reads the same handoff, acked false until acknowledged; the kind defaults to handoff.
    expect((await query(bob.ctx, { direction: "to_me" }))[0]).toEqual(h);
    expect((await create(w.ctx, { to_actor_ids: ["bob"] })).kind).toBe("handoff");
  });

  it('several recipients by id, external_ref and "me" collapse duplicates: one recipient row and one notification each', async () => {
    const w = await world("create-many");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const h = await create(w.ctx, { to_actor_ids: [bob.id.actorId, "bob", " carol ", "me", "me", carol.id.actorId], kind: "collab" });
    const everyone = sorted([w.id.actorId, bob.id.actorId, carol.id.actorId]);
    expect(h.to_actor_ids).toEqual(everyone);
    expect(await recipientsOf(h.id as string)).toEqual(everyone);
    const notes = await notificationsFor(w.id.tenantId, h.id as string);
    expect(sorted(notes.map((n) => n.actor_id as string))).toEqual(everyone);
    expect(new Set(notes.map((n) => n.kind))).toEqual(new Set(["collab"]));
    expect(await verbsOf(w.id.tenantId, h.id as string)).toEqual(["handoff.created"]);
    // Sent to yourself, it is in your inbox too.
    expect(ids((await ok(w.ctx, "inbox", {})).items as Structured[])).toEqual([h.id]);
  });

  it("every kind is accepted and its notification carries that kind; an unknown kind is invalid_input", async () => {
    const w = await world("create-kinds");
    const bob = await w.other("bob");
    for (const kind of HANDOFF_KINDS) {
      const h = await create(w.ctx, { to_actor_ids: ["bob"], kind, title: `a ${kind}` });
      expect(h.kind).toBe(kind);
      expect((await notificationsFor(w.id.tenantId, h.id as string)).map((n) => n.kind)).toEqual([kind]);
    }
    expect(sorted((await query(bob.ctx)).map((h) => h.kind as string))).toEqual(sorted([...HANDOFF_KINDS]));
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "x", kind: "task" }, "invalid_input");
  });

  it("options: allow_free_text false without options is invalid_input; empty and oversized inputs are refused; nothing is written", async () => {
    const w = await world("create-options");
    await w.other("bob");
    const e = await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "Pick", allow_free_text: false }, "invalid_input");
    expect(e.message).toMatch(/allow_free_text/);
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "Pick", allow_free_text: false, options: [] }, "invalid_input");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: [], title: "Pick" }, "invalid_input");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "   " }, "invalid_input");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "Pick", options: [""] }, "invalid_input");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "Pick", options: Array.from({ length: 21 }, (_, i) => `o${i}`) }, "invalid_input");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "Pick", body: "x".repeat(20_001) }, "invalid_input");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "Pick", urgency: "high" }, "invalid_input");
    // camelCase aliases are accepted.
    const h = await create(w.ctx, { toActorIds: ["bob"], title: "Pick", allowFreeText: false, options: ["a", "b"] });
    expect(h).toMatchObject({
      allow_free_text: false,
      options: [
        { label: "a", summary: "" },
        { label: "b", summary: "" },
      ],
    });
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
  });

  it("due_at takes dates and instants with offsets, normalized to UTC; an unparseable or impossible date is invalid_input", async () => {
    const w = await world("create-due");
    await w.other("bob");
    expect((await create(w.ctx, { to_actor_ids: ["bob"], due_at: "2030-02-01T17:30:00+02:00" })).due_at).toBe("2030-02-01T15:30:00.000Z");
    expect((await create(w.ctx, { to_actor_ids: ["bob"], due_at: "2030-02-01T09:00:00Z" })).due_at).toBe("2030-02-01T09:00:00.000Z");
    for (const bad of ["tomorrow", "2030-02-31", "2030-13-01T00:00:00Z", "01/02/2030"]) {
      const e = await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "x", due_at: bad }, "invalid_input");
      expect(e.message).toContain(bad);
      expect(e.hint).toMatch(/2026-12-01/);
    }
  });

  it("related task and project: the project is inferred from the task (by id or KEY-n); an unknown one is not_found", async () => {
    const w = await world("create-related");
    await w.other("bob");
    const p = (await ok(w.ctx, "project_create", { title: "API", key: "API" })).project as Structured;
    const q = (await ok(w.ctx, "project_create", { title: "Web", key: "WEB" })).project as Structured;
    const t = (await ok(w.ctx, "task_create", { project_id: p.id, title: "Cache" })).task as Structured;

    const byRef = await create(w.ctx, { to_actor_ids: ["bob"], related_task_id: "API-1" });
    expect(byRef).toMatchObject({ related_task_id: t.id, related_project_id: p.id });
    expect((await activityOf(w.id.tenantId, byRef.id as string))[0]!.project_id).toBe(p.id);
    expect(await create(w.ctx, { to_actor_ids: ["bob"], related_task_id: t.id })).toMatchObject({ related_task_id: t.id, related_project_id: p.id });
    expect(await create(w.ctx, { to_actor_ids: ["bob"], related_project_id: "web" })).toMatchObject({ related_task_id: null, related_project_id: q.id });

    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "x", related_task_id: "API-9" }, "not_found");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "x", related_task_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], title: "x", related_project_id: "NOPE" }, "not_found");
  });

  it("an unknown recipient among known ones is not_found and writes nothing: no handoff, recipients, notifications or activity", async () => {
    const w = await world("create-unknown");
    await w.other("bob");
    const stranger = crypto.randomUUID();
    const e = await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob", stranger, "me"], title: "x", fingerprint: "fp" }, "not_found");
    expect(e.message).toContain(stranger);
    expect(e.hint).toMatch(/actor_query/);
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["nobody-by-that-name"], title: "x" }, "not_found");
    // Spelled out, for the record: the tenant has no handoff rows of any kind.
    for (const table of ["handoffs", "handoff_recipients", "notifications"]) {
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?`, w.id.tenantId)).toBe(0);
    }
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb LIKE 'handoff.%'", w.id.tenantId)).toBe(0);
    // The fingerprint of the refused call is not held: the next create with it is new.
    expect((await create(w.ctx, { to_actor_ids: ["bob"], fingerprint: "fp" })).fingerprint).toBe("fp");
  });

  it("a retried call with the same idempotency_key replays the first result and writes nothing more", async () => {
    const w = await world("create-idem");
    await w.other("bob");
    const args = { to_actor_ids: ["bob"], title: "Once", idempotency_key: "k-1" };
    const first = await ok(w.ctx, "handoff_create", args);
    const before = await tenantState(w.id.tenantId);
    const again = await ok(w.ctx, "handoff_create", args);
    expect(again.idempotent_replay).toBe(true);
    expect(again.handoff).toEqual(first.handoff);
    expect(await tenantState(w.id.tenantId)).toEqual(before);
    await rejects(w.ctx, "handoff_create", { ...args, title: "Other" }, "idempotency_key_reused");
  });
});

describe("handoff_create fingerprint", () => {
  it("while the first is open or claimed, the same fingerprint returns it (deduplicated) and writes nothing; once resolved a new one is created", async () => {
    const w = await world("fp-live");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const first = await create(w.ctx, { to_actor_ids: ["bob", "carol"], title: "Review PR 12", kind: "review", fingerprint: "review:pr-12" });
    const tenant = w.id.tenantId;

    const retry = async (who: Who) => {
      const before = await tenantState(tenant);
      w.clock.advance(MINUTE);
      // Different title and recipients do not matter: the live one is returned as it is.
      const r = await ok(who.ctx, "handoff_create", { to_actor_ids: ["me"], title: "Review PR 12 again", kind: "review", fingerprint: "review:pr-12" });
      expect(r.deduplicated).toBe(true);
      expect(await tenantState(tenant)).toEqual(before);
      return r.handoff as Structured;
    };

    // Open: the creator's retry returns it (acked as seen by the caller: alice is no recipient).
    expect(await retry(w)).toEqual(first);
    // Another actor of the tenant hits the same live one.
    expect((await retry(carol)).id).toBe(first.id);
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ?", tenant)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ? AND object_id = ?", tenant, first.id)).toBe(2);
    expect(await verbsOf(tenant, first.id as string)).toEqual(["handoff.created"]);

    // Claimed: still live, still returned (now showing the claim).
    await ok(bob.ctx, "handoff_claim", { handoff_id: first.id });
    const claimed = await retry(w);
    expect(claimed).toMatchObject({ id: first.id, status: "claimed", claimed_by: bob.id.actorId });

    // Resolved: the fingerprint is free again.
    await ok(w.ctx, "handoff_resolve", { handoff_id: first.id });
    const second = await create(w.ctx, { to_actor_ids: ["carol"], title: "Review PR 12, take 2", kind: "review", fingerprint: "review:pr-12" });
    expect(second.id).not.toBe(first.id);
    expect(second).toMatchObject({ status: "open", to_actor_ids: [carol.id.actorId], fingerprint: "review:pr-12" });
    expect((await retry(bob)).id).toBe(second.id);

    // Cancelled frees it too.
    await ok(carol.ctx, "handoff_resolve", { handoff_id: second.id, resolution: "cancelled" });
    const third = await create(w.ctx, { to_actor_ids: ["bob"], fingerprint: "review:pr-12" });
    expect(sorted([first.id, second.id, third.id] as string[])).toHaveLength(3);
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ? AND fingerprint = 'review:pr-12'", tenant)).toBe(3);
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ? AND fingerprint = 'review:pr-12' AND status IN ('open', 'claimed')", tenant)).toBe(1);

    // Without a fingerprint, or with another one, nothing is de-duplicated. (The two identical calls
    // carry their own idempotency keys: without, the second would be a retry of the first.)
    await create(w.ctx, { to_actor_ids: ["bob"], title: "Same title", idempotency_key: "same-title-1" });
    await create(w.ctx, { to_actor_ids: ["bob"], title: "Same title", idempotency_key: "same-title-2" });
    await create(w.ctx, { to_actor_ids: ["bob"], fingerprint: "review:pr-13" });
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ?", tenant)).toBe(6);
  });

  it("six concurrent creates with one fingerprint (distinct idempotency keys) leave exactly one handoff", async () => {
    const w = await world("fp-race");
    const bob = await w.other("bob");
    await w.other("carol");
    const actors = [w, bob, w, bob, w, bob];
    const results = await Promise.all(
      actors.map((who, i) => call(who.ctx, "handoff_create", { to_actor_ids: ["bob", "carol"], title: `Deploy ${i}`, fingerprint: "deploy:v2", idempotency_key: `race-${i}` })),
    );
    for (const r of results) expect(r.ok, JSON.stringify(r)).toBe(true);
    const winners = results.filter((r) => !r.deduplicated);
    expect(winners).toHaveLength(1);
    expect(new Set(results.map((r) => r.handoff.id)).size).toBe(1);
    const id = winners[0]!.handoff.id as string;
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM handoff_recipients WHERE tenant_id = ?", w.id.tenantId)).toBe(2);
    expect(await count("SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ?", w.id.tenantId)).toBe(2);
    expect(await verbsOf(w.id.tenantId, id)).toEqual(["handoff.created"]);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'handoff.created'", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", w.id.tenantId)).toBe(0);
  });
});

describe("handoff_claim", () => {
  it("two recipients racing: exactly one wins, the other gets handoff_taken naming the holder; the winner re-claiming is already", async () => {
    const w = await world("claim-race2");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    // Several rounds, so a lucky interleaving cannot pass for a guarantee.
    for (let round = 0; round < 4; round++) {
      const h = await create(w.ctx, { to_actor_ids: ["bob", "carol"], title: `Round ${round}` });
      const [a, b] = await Promise.all([call(bob.ctx, "handoff_claim", { handoff_id: h.id }), call(carol.ctx, "handoff_claim", { handoff_id: h.id })]);
      const outcomes = [a, b];
      const won = outcomes.filter((r) => r.ok);
      const lost = outcomes.filter((r) => !r.ok);
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const winner = won[0] === a ? bob : carol;
      expect(won[0]!.already).toBe(false);
      expect(won[0]!.handoff).toMatchObject({ id: h.id, status: "claimed", claimed_by: winner.id.actorId });
      expect(lost[0]!.error).toMatchObject({ code: "handoff_taken", retryable: false });
      expect(lost[0]!.error.message).toContain(winner.id.actorId);
      expect((await handoffRow(h.id as string)).claimed_by).toBe(winner.id.actorId);
      const act = await activityOf(w.id.tenantId, h.id as string);
      expect(act.map((x) => x.verb)).toEqual(["handoff.created", "handoff.claimed"]);
      expect(act[1]).toMatchObject({ actor_id: winner.id.actorId, session_id: winner.ctx.sessionId, object_type: "work_request" });

      // The winner again: within the retry window a retry, given its first success back; past it a
      // new claim, already, nothing written. The loser again: still taken.
      const before = await tenantState(w.id.tenantId);
      expect(await ok(winner.ctx, "handoff_claim", { handoff_id: h.id })).toMatchObject({ idempotent_replay: true, already: false });
      w.clock.advance(DERIVED_WINDOW_MS);
      const again = await ok(winner.ctx, "handoff_claim", { handoff_id: h.id });
      expect(again.idempotent_replay).toBeUndefined();
      expect(again).toMatchObject({ already: true, handoff: { status: "claimed", claimed_by: winner.id.actorId } });
      expect(await tenantState(w.id.tenantId)).toEqual(before);
      await rejects(winner === bob ? carol.ctx : bob.ctx, "handoff_claim", { handoff_id: h.id }, "handoff_taken");
    }
  });

  it("five recipients racing: exactly one wins, four get handoff_taken, one handoff.claimed", async () => {
    const w = await world("claim-race5");
    const names = ["r1", "r2", "r3", "r4", "r5"];
    const rs = await Promise.all(names.map((n) => w.other(n)));
    const h = await create(w.ctx, { to_actor_ids: names, title: "Take me" });
    const results = await Promise.all(rs.map((r) => call(r.ctx, "handoff_claim", { handoff_id: h.id })));
    const won = results.map((r, i) => ({ r, who: rs[i]! })).filter(({ r }) => r.ok);
    expect(won).toHaveLength(1);
    const holder = won[0]!.who.id.actorId;
    for (const r of results.filter((x) => !x.ok)) {
      expect(r.error.code).toBe("handoff_taken");
      expect(r.error.message).toContain(holder);
    }
    expect(await handoffRow(h.id as string)).toMatchObject({ status: "claimed", claimed_by: holder });
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'handoff.claimed'", w.id.tenantId)).toBe(1);
  });

  it("the compare-and-swap holds on its own, without the Durable Object's queue", async () => {
    const w = await world("claim-cas");
    const rs = await Promise.all(["x1", "x2", "x3", "x4"].map((n) => w.other(n)));
    const h = await create(w.ctx, { to_actor_ids: ["x1", "x2", "x3", "x4"] });
    const now = new Date(at(MINUTE));
    const outcomes = await Promise.all(rs.map((r) => claimHandoff(env.DB, { tenantId: w.id.tenantId, actorId: r.id.actorId, sessionId: "", handoffId: h.id as string, now })));
    const won = outcomes.filter((o) => o.claimed);
    expect(won).toEqual([{ claimed: true, already: false }]);
    const holder = (await handoffRow(h.id as string)).claimed_by as string;
    expect(outcomes.filter((o) => !o.claimed)).toEqual([1, 2, 3].map(() => ({ claimed: false, reason: "taken", holder })));
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'handoff.claimed'", w.id.tenantId)).toBe(1);
  });

  it("refusals write nothing: a non-recipient (even the creator) is not_recipient; responded, resolved or cancelled is handoff_closed; unknown is not_found", async () => {
    const w = await world("claim-refuse");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const h = await create(w.ctx, { to_actor_ids: ["bob"] });
    const e = await rejects(carol.ctx, "handoff_claim", { handoff_id: h.id }, "not_recipient");
    expect(e.hint).toMatch(/inbox/);
    await rejects(w.ctx, "handoff_claim", { handoff_id: h.id }, "not_recipient");
    await rejects(bob.ctx, "handoff_claim", { handoff_id: crypto.randomUUID() }, "not_found");

    const responded = await create(w.ctx, { to_actor_ids: ["bob"], title: "Please answer" });
    await ok(bob.ctx, "handoff_respond", { handoff_id: responded.id, response: { text: "done" } });
    await rejects(bob.ctx, "handoff_claim", { handoff_id: responded.id }, "handoff_closed");

    await ok(w.ctx, "handoff_resolve", { handoff_id: h.id });
    const closed = await rejects(bob.ctx, "handoff_claim", { handoff_id: h.id }, "handoff_closed");
    expect(closed.message).toContain("resolved");
    const cancelled = await create(w.ctx, { to_actor_ids: ["bob"], title: "Never mind" });
    await ok(w.ctx, "handoff_resolve", { handoff_id: cancelled.id, resolution: "cancelled" });
    await rejects(bob.ctx, "handoff_claim", { handoff_id: cancelled.id }, "handoff_closed");
    // A closed one a non-recipient tries is still not theirs.
    await rejects(carol.ctx, "handoff_claim", { handoff_id: h.id }, "not_recipient");
  });
});

describe("handoff_respond", () => {
  it("a recipient answers: status responded, the creator is notified (kind response), and from_me shows the answer", async () => {
    const w = await world("respond-basic");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const h = await create(w.ctx, { to_actor_ids: ["bob", "carol"], kind: "question", title: "Which cache?", options: ["redis", "kv"] });
    w.clock.advance(5 * MINUTE);
    const r = await ok(bob.ctx, "handoff_respond", { handoff_id: h.id, response: { chosen_option: "kv", text: "KV is enough", result_ref: "https://example.test/adr/7" } });
    expect(r.handoff).toMatchObject({
      id: h.id,
      status: "responded",
      response: { chosen_option: "kv", text: "KV is enough", result_ref: "https://example.test/adr/7" },
      responded_by: bob.id.actorId,
      responded_at: at(5 * MINUTE),
      claimed_by: bob.id.actorId,
      updated_at: at(5 * MINUTE),
    });
    const notes = await notificationsFor(w.id.tenantId, h.id as string);
    const response = notes.filter((n) => n.kind === "response");
    expect(response).toHaveLength(1);
    expect(response[0]).toMatchObject({ actor_id: w.id.actorId, from_actor_id: bob.id.actorId, object_type: "work_request", created_at: at(5 * MINUTE) });
    expect(response[0]!.summary).toContain("Which cache?");
    expect((await activityOf(w.id.tenantId, h.id as string)).at(-1)).toMatchObject({ verb: "handoff.responded", actor_id: bob.id.actorId });
    // The asker reads the answer with from_me; the creator also sees it through notification_query.
    const mine = await query(w.ctx, { direction: "from_me" });
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ id: h.id, status: "responded", response: { chosen_option: "kv", text: "KV is enough" }, responded_by: bob.id.actorId });
    const feed = (await ok(w.ctx, "notification_query", {})).items as Structured[];
    expect(feed.map((n) => n.kind)).toEqual(["response"]);
    // Once answered, the other recipient cannot answer again.
    await rejects(carol.ctx, "handoff_respond", { handoff_id: h.id, response: { chosen_option: "redis" } }, "handoff_closed");
  });

  it("validates the answer: chosen_option must be offered (the hint lists them); allow_free_text false needs one; an empty response is refused", async () => {
    const w = await world("respond-validate");
    const bob = await w.other("bob");
    const strict = await create(w.ctx, { to_actor_ids: ["bob"], kind: "approval", options: ["ship", { label: "hold", summary: "wait a day" }], allow_free_text: false });
    const bad = await rejects(bob.ctx, "handoff_respond", { handoff_id: strict.id, response: { chosen_option: "Ship" } }, "invalid_input");
    expect(bad.message).toContain("Ship");
    expect(bad.hint).toContain("ship, hold");
    const needs = await rejects(bob.ctx, "handoff_respond", { handoff_id: strict.id, response: { text: "looks fine to me" } }, "invalid_input");
    expect(needs.hint).toContain("ship, hold");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: strict.id, response: {} }, "invalid_input");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: strict.id }, "invalid_input");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: strict.id, response: { text: 42 } }, "invalid_input");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: strict.id, response: { text: "x".repeat(20_001) } }, "invalid_input");
    expect((await ok(bob.ctx, "handoff_respond", { handoff_id: strict.id, response: { chosen_option: "hold", text: "after the freeze" } })).handoff.response).toEqual({
      chosen_option: "hold",
      text: "after the freeze",
    });

    // Without options, any chosen_option is refused and the hint says to answer with text.
    const open = await create(w.ctx, { to_actor_ids: ["bob"] });
    const none = await rejects(bob.ctx, "handoff_respond", { handoff_id: open.id, response: { chosen_option: "yes" } }, "invalid_input");
    expect(none.hint).toMatch(/none offered/);
    expect((await ok(bob.ctx, "handoff_respond", { handoff_id: open.id, response: { text: "yes" } })).handoff.status).toBe("responded");
  });

  it("keeps extra keys of the response object as given (its schema is open); camelCase aliases of the named keys still map", async () => {
    const w = await world("respond-extra");
    const bob = await w.other("bob");
    const h = await create(w.ctx, { to_actor_ids: ["bob"] });
    const r = await ok(bob.ctx, "handoff_respond", { handoff_id: h.id, response: { text: "done", confidence: "high", files: ["a.ts"] } });
    expect(r.handoff.response).toEqual({ text: "done", confidence: "high", files: ["a.ts"] });
    expect(JSON.parse((await handoffRow(h.id as string)).response as string)).toEqual({ text: "done", confidence: "high", files: ["a.ts"] });

    const pick = await create(w.ctx, { to_actor_ids: ["bob"], options: ["kv", "redis"], allow_free_text: false });
    await rejects(bob.ctx, "handoff_respond", { handoff_id: pick.id, response: { chosenOption: 5 } }, "invalid_input");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: pick.id, response: { chosenOption: "memcached" } }, "invalid_input");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: pick.id, response: { chosen_option: "kv", note: "a\u0000b" } }, "invalid_input");
    const aliased = await ok(bob.ctx, "handoff_respond", { handoff_id: pick.id, response: { chosenOption: "kv", resultRef: "ADR-7" } });
    expect(aliased.handoff.response).toEqual({ chosen_option: "kv", result_ref: "ADR-7" });
  });

  it("a claimed handoff is answered only by its claimer; closed ones are handoff_closed; non-recipients are not_recipient; nothing written", async () => {
    const w = await world("respond-claimed");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const dave = await w.other("dave");
    const h = await create(w.ctx, { to_actor_ids: ["bob", "carol"] });
    await ok(carol.ctx, "handoff_claim", { handoff_id: h.id });
    const taken = await rejects(bob.ctx, "handoff_respond", { handoff_id: h.id, response: { text: "mine" } }, "handoff_taken");
    expect(taken.message).toContain(carol.id.actorId);
    await rejects(dave.ctx, "handoff_respond", { handoff_id: h.id, response: { text: "drive-by" } }, "not_recipient");
    await rejects(w.ctx, "handoff_respond", { handoff_id: h.id, response: { text: "answering myself" } }, "not_recipient");
    await rejects(bob.ctx, "handoff_respond", { handoff_id: crypto.randomUUID(), response: { text: "?" } }, "not_found");
    expect((await ok(carol.ctx, "handoff_respond", { handoff_id: h.id, response: { text: "done" } })).handoff).toMatchObject({
      status: "responded",
      responded_by: carol.id.actorId,
      claimed_by: carol.id.actorId,
    });
    // Answered once: a second answer, even by the same recipient, is closed.
    await rejects(carol.ctx, "handoff_respond", { handoff_id: h.id, response: { text: "again" } }, "handoff_closed");

    for (const resolution of ["processed", "cancelled"] as const) {
      const x = await create(w.ctx, { to_actor_ids: ["bob"], title: `to be ${resolution}` });
      await ok(w.ctx, "handoff_resolve", { handoff_id: x.id, resolution });
      const e = await rejects(bob.ctx, "handoff_respond", { handoff_id: x.id, response: { text: "late" } }, "handoff_closed");
      expect(e.hint).toMatch(/new handoff/);
      expect(await handoffRow(x.id as string)).toMatchObject({ response: null, responded_by: null });
      expect(await count("SELECT COUNT(*) AS n FROM notifications WHERE object_id = ? AND kind = 'response'", x.id)).toBe(0);
    }
  });
});

describe("handoff_resolve", () => {
  it("creator or recipient: processed → resolved, cancelled → cancelled; a third actor is not_participant; twice is handoff_closed", async () => {
    const w = await world("resolve");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const a = await create(w.ctx, { to_actor_ids: ["bob"], title: "A" });
    await rejects(carol.ctx, "handoff_resolve", { handoff_id: a.id }, "not_participant");
    w.clock.advance(MINUTE);
    const r = await ok(w.ctx, "handoff_resolve", { handoff_id: a.id, note: "done elsewhere" });
    expect(r.handoff).toMatchObject({ status: "resolved", resolution: "processed", resolution_note: "done elsewhere", updated_at: at(MINUTE) });
    expect(await handoffRow(a.id as string)).toMatchObject({ resolved_at: at(MINUTE) });
    expect(await verbsOf(w.id.tenantId, a.id as string)).toEqual(["handoff.created", "handoff.resolved"]);
    const twice = await rejects(w.ctx, "handoff_resolve", { handoff_id: a.id }, "handoff_closed");
    expect(twice.message).toContain("resolved");
    await rejects(bob.ctx, "handoff_resolve", { handoff_id: a.id, resolution: "cancelled" }, "handoff_closed");

    // A recipient cancels; a responded one can be resolved by its creator.
    const b = await create(w.ctx, { to_actor_ids: ["bob"], title: "B" });
    const c = await ok(bob.ctx, "handoff_resolve", { handoff_id: b.id, resolution: "cancelled", note: "not mine" });
    expect(c.handoff).toMatchObject({ status: "cancelled", resolution: "cancelled", resolution_note: "not mine" });
    expect((await activityOf(w.id.tenantId, b.id as string)).at(-1)).toMatchObject({ verb: "handoff.cancelled", actor_id: bob.id.actorId });
    await rejects(w.ctx, "handoff_resolve", { handoff_id: b.id }, "handoff_closed");

    const d = await create(w.ctx, { to_actor_ids: ["bob"], title: "D" });
    await ok(bob.ctx, "handoff_respond", { handoff_id: d.id, response: { text: "answer" } });
    const done = await ok(w.ctx, "handoff_resolve", { handoff_id: d.id });
    expect(done.handoff).toMatchObject({ status: "resolved", response: { text: "answer" }, responded_by: bob.id.actorId });

    await rejects(w.ctx, "handoff_resolve", { handoff_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "handoff_resolve", { handoff_id: d.id, resolution: "done" }, "invalid_input");
  });
});

describe("handoff_query", () => {
  it("direction to_me, from_me and any; status[] and type[] filters; related_task_id; newest first", async () => {
    const w = await world("query");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache" })).task as Structured;
    const step = () => w.clock.advance(MINUTE);
    const aToB = await create(w.ctx, { to_actor_ids: ["bob"], kind: "question", title: "a→b", related_task_id: t.id });
    step();
    const bToA = await create(bob.ctx, { to_actor_ids: ["alice"], kind: "review", title: "b→a" });
    step();
    const cToB = await create(carol.ctx, { to_actor_ids: ["bob"], kind: "approval", title: "c→b", related_task_id: t.id });
    step();
    const aToAB = await create(w.ctx, { to_actor_ids: ["me", "bob"], kind: "question", title: "a→a,b" });
    step();
    await ok(bob.ctx, "handoff_respond", { handoff_id: aToB.id, response: { text: "ok" } });

    expect(ids(await query(w.ctx))).toEqual(ids([aToAB, bToA])); // to_me is the default
    expect(ids(await query(w.ctx, { direction: "to_me" }))).toEqual(ids([aToAB, bToA]));
    expect(ids(await query(w.ctx, { direction: "from_me" }))).toEqual(ids([aToAB, aToB]));
    expect(ids(await query(bob.ctx, { direction: "to_me" }))).toEqual(ids([aToAB, cToB, aToB]));
    // any: every handoff of the tenant, newest first.
    expect(ids(await query(w.ctx, { direction: "any" }))).toEqual(ids([aToAB, cToB, bToA, aToB]));

    expect(ids(await query(w.ctx, { direction: "from_me", status: ["responded"] }))).toEqual([aToB.id]);
    expect(ids(await query(w.ctx, { direction: "any", status: ["open", "claimed"] }))).toEqual(ids([aToAB, cToB, bToA]));
    expect(ids(await query(w.ctx, { direction: "any", type: ["question"] }))).toEqual(ids([aToAB, aToB]));
    expect(ids(await query(w.ctx, { direction: "any", type: ["review", "approval"] }))).toEqual(ids([cToB, bToA]));
    expect(ids(await query(bob.ctx, { direction: "to_me", type: ["question"], status: ["open"] }))).toEqual([aToAB.id]);
    expect(ids(await query(w.ctx, { direction: "any", related_task_id: "API-1" }))).toEqual(ids([cToB, aToB]));
    expect(ids(await query(w.ctx, { direction: "from_me", related_task_id: t.id }))).toEqual([aToB.id]);
    expect(await query(w.ctx, { direction: "to_me", status: ["cancelled"] })).toEqual([]);

    // acked reflects the caller's own acknowledgement only.
    await ok(bob.ctx, "inbox", { ack: [aToAB.id] });
    expect((await query(bob.ctx, { direction: "to_me" })).find((h) => h.id === aToAB.id)!.acked).toBe(true);
    expect((await query(w.ctx, { direction: "to_me" })).find((h) => h.id === aToAB.id)!.acked).toBe(false);
    expect((await query(carol.ctx, { direction: "any" })).every((h) => h.acked === false)).toBe(true);

    await rejects(w.ctx, "handoff_query", { related_task_id: "API-99" }, "not_found");
    await rejects(w.ctx, "handoff_query", { direction: "sideways" }, "invalid_input");
    await rejects(w.ctx, "handoff_query", { type: ["memo"] }, "invalid_input");
    await rejects(w.ctx, "handoff_query", { cursor: "not-a-cursor" }, "invalid_input");
  });

  it("cursor pagination is complete and without repeats, including handoffs created in the same instant", async () => {
    const w = await world("query-pages");
    await w.other("bob");
    const made: string[] = [];
    for (let i = 0; i < 9; i++) {
      // Three per instant: ties are broken by id.
      if (i % 3 === 0) w.clock.advance(MINUTE);
      made.push((await create(w.ctx, { to_actor_ids: ["bob"], title: `h${i}` })).id as string);
    }
    const expected = (await query(w.ctx, { direction: "from_me" })).map((h) => h.id as string);
    expect(sorted(expected)).toEqual(sorted(made));
    // Newest first: by created_at, then id, descending.
    const rowsDesc = await rows("SELECT id FROM handoffs WHERE tenant_id = ? ORDER BY created_at DESC, id DESC", w.id.tenantId);
    expect(expected).toEqual(rowsDesc.map((r) => r.id));
    expect(expected.slice(0, 3).every((id) => made.slice(6).includes(id))).toBe(true);

    for (const limit of [1, 2, 4]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await ok(w.ctx, "handoff_query", { direction: "from_me", limit, ...(cursor ? { cursor } : {}) });
        expect((page.items as Structured[]).length).toBeLessThanOrEqual(limit);
        seen.push(...ids(page.items as Structured[]));
        cursor = page.next_cursor as string | undefined;
        pages++;
      } while (cursor && pages < 20);
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(9 / limit));
    }
  });
});

describe("inbox", () => {
  it("lists unacknowledged handoffs addressed to you, oldest first; items stay until acked; ack removes exactly those", async () => {
    const w = await world("inbox");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const h1 = await create(w.ctx, { to_actor_ids: ["bob", "carol"], kind: "question", title: "one" });
    w.clock.advance(MINUTE);
    const h2 = await create(w.ctx, { to_actor_ids: ["bob"], kind: "review", title: "two" });
    w.clock.advance(MINUTE);
    const h3 = await create(carol.ctx, { to_actor_ids: ["bob"], kind: "approval", title: "three" });
    const notMine = await create(w.ctx, { to_actor_ids: ["carol"], title: "carol only" });

    let inbox = await inboxAgrees(bob.ctx);
    expect(ids(inbox.items as Structured[])).toEqual(ids([h1, h2, h3]));
    expect(inbox).toMatchObject({ acked: 0, total: 3 });
    expect((inbox.items as Structured[])[0]).toMatchObject({ id: h1.id, title: "one", acked: false, to_actor_ids: sorted([bob.id.actorId, carol.id.actorId]) });

    // Reading is not acting: the same items come back, however often bob polls, and after he works on them.
    for (let i = 0; i < 2; i++) expect(ids((await inboxAgrees(bob.ctx)).items as Structured[])).toEqual(ids([h1, h2, h3]));
    await ok(bob.ctx, "handoff_claim", { handoff_id: h2.id });
    await ok(bob.ctx, "handoff_respond", { handoff_id: h3.id, response: { text: "approved" } });
    inbox = await inboxAgrees(bob.ctx);
    expect(ids(inbox.items as Structured[])).toEqual(ids([h1, h2, h3]));
    expect((inbox.items as Structured[]).map((h) => h.status)).toEqual(["open", "claimed", "responded"]);

    // ack removes exactly the named ones, for bob only.
    w.clock.advance(MINUTE);
    inbox = await inboxAgrees(bob.ctx, { ack: [h1.id, h3.id] });
    expect(inbox).toMatchObject({ acked: 2, total: 1 });
    expect(ids(inbox.items as Structured[])).toEqual([h2.id]);
    expect((await rows("SELECT acked_at FROM handoff_recipients WHERE handoff_id = ? AND actor_id = ?", h1.id, bob.id.actorId))[0]!.acked_at).toBe(at(3 * MINUTE));
    const carolInbox = await inboxAgrees(carol.ctx);
    expect(ids(carolInbox.items as Structured[])).toEqual(ids([h1, notMine]));

    // Acking again, acking ids not addressed to you, unknown ids: counted 0 and nothing moves.
    const before = await tenantState(w.id.tenantId);
    const noop = await inboxAgrees(bob.ctx, { ack: [h1.id, notMine.id, crypto.randomUUID(), "x"] });
    expect(noop).toMatchObject({ acked: 0, total: 1 });
    expect(await tenantState(w.id.tenantId)).toEqual(before);
    expect(ids((await inboxAgrees(carol.ctx)).items as Structured[])).toEqual(ids([h1, notMine]));

    // Carol's ack of the shared one leaves nobody else's state touched; duplicates in ack count once.
    expect(await inboxAgrees(carol.ctx, { ack: [h1.id, h1.id] })).toMatchObject({ acked: 1, total: 1 });
    expect(await inboxAgrees(bob.ctx, { ack: [h2.id] })).toMatchObject({ acked: 1, total: 0, items: [] });
    // The creator's own inbox never held any of these.
    expect(await inboxAgrees(w.ctx)).toMatchObject({ items: [], total: 0 });
  });

  it("kinds filters the items and the total; limit caps the items but not the total", async () => {
    const w = await world("inbox-kinds");
    const bob = await w.other("bob");
    const made: Structured[] = [];
    for (const kind of ["question", "review", "question", "approval", "question"]) {
      w.clock.advance(MINUTE);
      made.push(await create(w.ctx, { to_actor_ids: ["bob"], kind, title: kind }));
    }
    const questions = made.filter((h) => h.kind === "question");
    const q = await ok(bob.ctx, "inbox", { kinds: ["question"] });
    expect(q).toMatchObject({ total: 3, acked: 0 });
    expect(ids(q.items as Structured[])).toEqual(ids(questions));
    expect((await ok(bob.ctx, "inbox", { kinds: ["review", "approval"] })).total).toBe(2);
    expect((await ok(bob.ctx, "inbox", { kinds: ["collab"] })).items).toEqual([]);
    const capped = await ok(bob.ctx, "inbox", { limit: 2 });
    expect(capped.total).toBe(5);
    expect(ids(capped.items as Structured[])).toEqual(ids(made.slice(0, 2)));
    // ack is not limited by the kinds filter: it acts on the ids named.
    const acked = await ok(bob.ctx, "inbox", { kinds: ["question"], ack: [made[1]!.id] });
    expect(acked).toMatchObject({ acked: 1, total: 3 });
    expect((await inboxAgrees(bob.ctx)).total).toBe(4);
    await rejects(bob.ctx, "inbox", { kinds: ["memo"] }, "invalid_input");
    await rejects(bob.ctx, "inbox", { limit: 0 }, "invalid_input");
  });

  it("whoami's inbox count follows the inbox, and handoffs closed before you acted leave both", async () => {
    const w = await world("inbox-whoami");
    const bob = await w.other("bob");
    expect((await inboxAgrees(bob.ctx)).total).toBe(0);
    const keep = await create(w.ctx, { to_actor_ids: ["bob"], title: "keep" });
    const resolved = await create(w.ctx, { to_actor_ids: ["bob"], title: "resolved" });
    const cancelled = await create(w.ctx, { to_actor_ids: ["bob"], title: "cancelled" });
    expect((await inboxAgrees(bob.ctx)).total).toBe(3);
    await ok(w.ctx, "handoff_resolve", { handoff_id: resolved.id });
    await ok(w.ctx, "handoff_resolve", { handoff_id: cancelled.id, resolution: "cancelled" });
    const inbox = await inboxAgrees(bob.ctx);
    expect(ids(inbox.items as Structured[])).toEqual([keep.id]);
    expect(inbox.total).toBe(1);
    // They can still be acknowledged (counted), which changes neither view.
    expect(await inboxAgrees(bob.ctx, { ack: [resolved.id] })).toMatchObject({ acked: 1, total: 1 });
    expect(await inboxAgrees(bob.ctx, { ack: [keep.id] })).toMatchObject({ acked: 1, total: 0 });
  });
});

describe("review gate end to end", () => {
  it("in_review opens one review handoff in the reviewer's inbox; done is review_pending until the reviewer responds", async () => {
    const w = await world("gate");
    const bob = await w.other("bob");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache layer", reviewer_actor_id: "bob" })).task as Structured;
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_progress" } });
    expect((await inboxAgrees(bob.ctx)).total).toBe(0);

    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" } });
    const inbox = await inboxAgrees(bob.ctx, { kinds: ["review"] });
    expect(inbox.total).toBe(1);
    const review = (inbox.items as Structured[])[0]!;
    expect(review).toMatchObject({ kind: "review", status: "open", from_actor_id: w.id.actorId, to_actor_ids: [bob.id.actorId], related_task_id: t.id });
    expect(review.title).toContain("API-1");
    expect(ids(await query(w.ctx, { direction: "from_me", related_task_id: "API-1", type: ["review"] }))).toEqual([review.id]);

    const pending = await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");
    expect(pending.hint).toMatch(/handoff_respond/);
    // Claiming is not answering.
    await ok(bob.ctx, "handoff_claim", { handoff_id: review.id });
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");

    w.clock.advance(MINUTE);
    const answered = await ok(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM", verdict: "approved" } });
    expect(answered.handoff).toMatchObject({ status: "resolved", resolution: "processed", verdict: "approved", responded_by: bob.id.actorId });
    const done = await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } });
    expect(done.task).toMatchObject({ status: "done", done_at: at(MINUTE) });
    // The verdict resolved the review, so it needs no more action from bob and leaves his inbox.
    expect((await inboxAgrees(bob.ctx)).items).toEqual([]);
  });

  it("a second review request for a task with an open review is refused (review_already_open, naming it), writes nothing, and leaves the first as the one done waits for", async () => {
    const w = await world("gate-second");
    const bob = await w.other("bob");
    await w.other("carol");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache", reviewer_actor_id: "bob" })).task as Structured;
    const moved = await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" } });
    // The move says what it opened.
    expect(moved.review_handoff).toMatchObject({ to: [bob.id.actorId], opened: true });
    const first = moved.review_handoff.id as string;
    expect(ids(await query(bob.ctx, { type: ["review"] }))).toEqual([first]);

    for (const to of [["bob"], ["carol"]]) {
      const e = await rejects(w.ctx, "handoff_create", { to_actor_ids: to, kind: "review", title: "Review API-1", related_task_id: "API-1" }, "review_already_open");
      expect(e.message).toContain(first);
      expect(e.hint).toContain(`handoff_resolve { handoff_id: "${first}"`);
    }
    // Claimed is still open for this rule; other kinds about the task are not reviews and go through.
    await ok(bob.ctx, "handoff_claim", { handoff_id: first });
    await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], kind: "review", title: "again", related_task_id: t.id }, "review_already_open");
    await create(w.ctx, { to_actor_ids: ["bob"], kind: "question", related_task_id: t.id });

    // The hint leads somewhere: approving the one review unlocks done (nothing stranded in anyone's inbox).
    await ok(bob.ctx, "handoff_respond", { handoff_id: first, response: { verdict: "approved" } });
    expect((await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } })).task.status).toBe("done");
    // Once it is closed, a new review of the task may be asked for.
    const again = await create(w.ctx, { to_actor_ids: ["carol"], kind: "review", title: "Second opinion", related_task_id: t.id });
    expect(again.kind).toBe("review");
  });

  it("a cancelled review frees the task for a new review request", async () => {
    const w = await world("gate-cancel");
    await w.other("bob");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache" })).task as Structured;
    const one = await create(w.ctx, { to_actor_ids: ["bob"], kind: "review", related_task_id: t.id });
    const e = await rejects(w.ctx, "handoff_create", { to_actor_ids: ["bob"], kind: "review", title: "two", related_task_id: t.id }, "review_already_open");
    expect(e.hint).toContain(one.id);
    await ok(w.ctx, "handoff_resolve", { handoff_id: one.id, resolution: "cancelled" });
    expect((await create(w.ctx, { to_actor_ids: ["bob"], kind: "review", title: "two", related_task_id: t.id })).id).not.toBe(one.id);
  });

  it("an answer by anyone but the reviewer does not unlock done; the reviewer's answer on a fresh review does", async () => {
    const w = await world("gate-other");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const dave = await w.other("dave");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache layer", reviewer_actor_id: "bob" })).task as Structured;
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" } });
    const review = (await query(bob.ctx, { type: ["review"] }))[0]!;

    // Not a recipient: refused outright, and the task stays gated.
    await rejects(dave.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM" } }, "not_recipient");
    await rejects(w.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM" } }, "not_recipient");
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");

    // Another recipient (added behind the tools' back) answers: accepted as an answer, but not the review.
    await env.DB.prepare("INSERT INTO handoff_recipients (tenant_id, handoff_id, actor_id) VALUES (?, ?, ?)").bind(w.id.tenantId, review.id, carol.id.actorId).run();
    await ok(carol.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM from carol", verdict: "approved" } });
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");
    // The answered handoff is closed to bob now; a new round of review opens a fresh one for him.
    await rejects(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM", verdict: "approved" } }, "handoff_closed");
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_progress" } });
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" } });
    const fresh = (await query(bob.ctx, { type: ["review"], status: ["open"] }))[0]!;
    expect(fresh.id).not.toBe(review.id);
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");
    await ok(bob.ctx, "handoff_respond", { handoff_id: fresh.id, response: { text: "LGTM", verdict: "approved" } });
    expect((await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } })).task.status).toBe("done");
  });

  it("an answer by the reviewer to an unrelated handoff does not unlock the task", async () => {
    const w = await world("gate-unrelated");
    const bob = await w.other("bob");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache", reviewer_actor_id: "bob" })).task as Structured;
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" } });
    // A question about the same task is not its review.
    const q = await create(w.ctx, { to_actor_ids: ["bob"], kind: "question", related_task_id: t.id });
    await ok(bob.ctx, "handoff_respond", { handoff_id: q.id, response: { text: "yes" } });
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");
    // A review of another task neither.
    const other = (await ok(w.ctx, "task_create", { project_id: "API", title: "Other" })).task as Structured;
    const r = await create(w.ctx, { to_actor_ids: ["bob"], kind: "review", related_task_id: other.id });
    await ok(bob.ctx, "handoff_respond", { handoff_id: r.id, response: { text: "fine", verdict: "approved" } });
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");
  });
});

describe("tenant isolation", () => {
  it("another tenant cannot see, claim, respond to, resolve or ack A's handoffs, nor address A's actors", async () => {
    const a = await world("iso-a");
    const aBob = await a.other("bob");
    const b = await world("iso-b", "mallory");
    await ok(a.ctx, "project_create", { title: "API", key: "API" });
    const t = (await ok(a.ctx, "task_create", { project_id: "API", title: "Secret" })).task as Structured;
    const h = await create(a.ctx, { to_actor_ids: ["bob", "alice"], title: "A's secret", fingerprint: "shared-fp", related_task_id: t.id });

    const aState = () => tenantState(a.id.tenantId);
    const isolated = async (tool: string, args: unknown, code: string) => {
      const before = await aState();
      await rejects(b.ctx, tool, args, code);
      expect(await aState()).toEqual(before);
    };
    await isolated("handoff_claim", { handoff_id: h.id }, "not_found");
    await isolated("handoff_respond", { handoff_id: h.id, response: { text: "hijack" } }, "not_found");
    await isolated("handoff_resolve", { handoff_id: h.id, resolution: "cancelled" }, "not_found");
    await isolated("handoff_create", { to_actor_ids: [aBob.id.actorId], title: "hi" }, "not_found");
    await isolated("handoff_create", { to_actor_ids: [a.id.actorId, "me"], title: "hi" }, "not_found");
    await isolated("handoff_create", { to_actor_ids: ["me"], title: "hi", related_task_id: t.id }, "not_found");
    await isolated("handoff_query", { direction: "any", related_task_id: t.id }, "not_found");

    for (const direction of ["to_me", "from_me", "any"]) expect(await query(b.ctx, { direction })).toEqual([]);
    const before = await aState();
    expect(await inboxAgrees(b.ctx, { ack: [h.id] })).toMatchObject({ acked: 0, total: 0, items: [] });
    expect(await aState()).toEqual(before);
    expect(ids((await inboxAgrees(aBob.ctx)).items as Structured[])).toEqual([h.id]);

    // The same fingerprint in B is B's own handoff, not A's.
    const mine = await ok(b.ctx, "handoff_create", { to_actor_ids: ["me"], title: "B's own", fingerprint: "shared-fp" });
    expect(mine.deduplicated).toBe(false);
    expect(mine.handoff.id).not.toBe(h.id);
    expect(await aState()).toEqual(before);
    expect(ids(await query(a.ctx, { direction: "any" }))).toEqual([h.id]);
    expect(await fails(b.ctx, "handoff_claim", { handoff_id: h.id })).toMatchObject({ code: "not_found" });
  });
});
