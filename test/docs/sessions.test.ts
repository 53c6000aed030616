import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { AnyOpDef } from "../../src/docs/shared";
import { ingestDocument } from "../../src/docs/store/ingest";
import { pinOp, sessionOps, startOp, stopOp, unpinOp } from "../../src/docs/sessions/session";
import { currentScope, currentSession, listSessions, MAX_PINS_PER_SESSION, MAX_SESSIONS_PER_ACTOR } from "../../src/docs/sessions/model";
import { deleteDocument } from "../../src/docs/store/store";
import type { Ctx } from "../../src/core/context";
import { ToolError } from "../../src/core/errors";
import { makeCtx, seedIdentity, TestClock } from "../support/helpers";

type Out = Record<string, any>;

/** Runs an op the way the composite tools will: the op's own renames, its schema, then the handler. */
async function run(op: AnyOpDef, ctx: Ctx, params: Record<string, unknown> = {}): Promise<Out> {
  const raw = op.normalize ? op.normalize(params) : params;
  return op.run(ctx, op.params.parse(raw) as z.output<typeof op.params>);
}

async function refused(p: Promise<unknown>, code: string): Promise<ToolError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a refusal").toBeInstanceOf(ToolError);
  const e = err as ToolError;
  expect(e.code).toBe(code);
  expect(e.message.length).toBeGreaterThan(0);
  expect(e.hint.length).toBeGreaterThan(0);
  return e;
}

const text = (s: string) => new TextEncoder().encode(s);

async function tenant(actor = "agent", clock = new TestClock()) {
  const slug = `dsess-${crypto.randomUUID().slice(0, 8)}`;
  const id = await seedIdentity(slug, actor);
  return { slug, ctx: makeCtx(id, clock) };
}

async function put(ctx: Ctx, path: string, body = path) {
  return ingestDocument(ctx, { path, bytes: text(`content of ${body}`), mimeType: "text/markdown" });
}

/** Everything a caller can read back of its sessions. */
const state = async (ctx: Ctx) => ({ list: await listSessions(ctx), current: await currentSession(ctx) });

describe("docs_session", () => {
  describe("docs_session ops", () => {
    it("are the four session actions, each with described and bounded params", () => {
      expect(sessionOps.map((o) => [o.name, o.category])).toEqual([
        ["start", "session"],
        ["stop", "session"],
        ["pin", "session"],
        ["unpin", "session"],
      ]);
      for (const op of sessionOps) {
        for (const [key, field] of Object.entries(op.params.shape)) {
          expect((field as z.ZodType).description, `${op.name}.${key}`).toBeTruthy();
        }
      }
    });
  });

  describe("start", () => {
    it("starts a session and makes it current; a second start becomes current and the first stays", async () => {
      const { ctx } = await tenant();
      const a = await run(startOp, ctx, { name: "feature-review", description: "Reviewing the auth feature" });
      expect(a).toMatchObject({
        session: { name: "feature-review", description: "Reviewing the auth feature", warm: true, pins: 0, started_at: "2026-06-01T12:00:00.000Z", resumed_at: null },
        current: "feature-review",
        resumed: false,
        previous: null,
        sessions: 1,
      });
      const b = await run(startOp, ctx, { name: "bugfix", warm: false });
      expect(b).toMatchObject({ current: "bugfix", resumed: false, previous: "feature-review", sessions: 2, session: { warm: false, description: "" } });
      expect((await currentSession(ctx))?.name).toBe("bugfix");
      expect((await listSessions(ctx)).sessions.map((s) => s.name)).toEqual(["feature-review", "bugfix"]);
    });

    it("accepts the seed's `label` as the name, and refuses a label that contradicts name", async () => {
      const { ctx } = await tenant();
      expect((await run(startOp, ctx, { label: "feature-review" })).current).toBe("feature-review");
      expect((await run(startOp, ctx, { label: "same", name: "same" })).current).toBe("same");
      const before = await state(ctx);
      await refused(run(startOp, ctx, { label: "one", name: "two" }), "invalid_input");
      expect(await state(ctx)).toEqual(before);
    });

    it("generates a name when none is given", async () => {
      const { ctx } = await tenant();
      const r = await run(startOp, ctx, {});
      expect(r.current).toMatch(/^session-2026-06-01-[0-9a-f]{8}$/);
      expect((await currentSession(ctx))?.name).toBe(r.current);
    });

    it("resumes an existing session with its pins and keeps its description unless a new one is given", async () => {
      const clock = new TestClock();
      const { ctx } = await tenant("agent", clock);
      await put(ctx, "notes/a.md");
      await run(startOp, ctx, { name: "s1", description: "first" });
      await run(pinOp, ctx, { path: "notes/**" });
      await run(startOp, ctx, { name: "s2" });
      expect(await currentScope(ctx)).toBeNull();
      clock.advance(60_000);
      const back = await run(startOp, ctx, { name: "s1" });
      expect(back).toMatchObject({ resumed: true, previous: "s2", sessions: 2, session: { name: "s1", description: "first", pins: 1, resumed_at: "2026-06-01T12:01:00.000Z" } });
      expect(await currentScope(ctx)).toEqual({ patterns: ["notes/**"], hashes: [] });
      expect((await run(startOp, ctx, { name: "s1", description: "renamed" })).session.description).toBe("renamed");
    });

    it("refuses bad names and over-long text, changing nothing", async () => {
      const { ctx } = await tenant();
      await run(startOp, ctx, { name: "keep" });
      const before = await state(ctx);
      expect(startOp.params.safeParse({ name: "x".repeat(65) }).success).toBe(false);
      expect(startOp.params.safeParse({ name: "" }).success).toBe(false);
      expect(startOp.params.safeParse({ name: "ok", description: "d".repeat(501) }).success).toBe(false);
      expect(startOp.params.safeParse({ name: "ok", warm: "yes" }).success).toBe(false);
      expect(startOp.params.safeParse({ name: "ok", extra: 1 }).success).toBe(false);
      for (const bad of ["-leading-dash", "semi;colon", "tab\tname", "   ", "emoji🙂"]) {
        await refused(run(startOp, ctx, { name: bad }), "invalid_input");
      }
      expect(await state(ctx)).toEqual(before);
    });

    it(`keeps at most ${MAX_SESSIONS_PER_ACTOR} sessions per actor; resuming one still works at the cap`, async () => {
      const { ctx } = await tenant();
      for (let i = 0; i < MAX_SESSIONS_PER_ACTOR; i++) await run(startOp, ctx, { name: `s${i}` });
      const before = await state(ctx);
      const e = await refused(run(startOp, ctx, { name: "one-too-many" }), "too_many_sessions");
      expect(e.hint).toContain("s0");
      expect(await state(ctx)).toEqual(before);
      expect((await run(startOp, ctx, { name: "s3" })).resumed).toBe(true);
      await run(stopOp, ctx, { name: "s0" });
      expect((await run(startOp, ctx, { name: "one-too-many" })).resumed).toBe(false);
    });
  });

  describe("stop", () => {
    it("stops the current session and drops its pins by default; then no session is current", async () => {
      const { ctx } = await tenant();
      await put(ctx, "notes/a.md");
      await run(startOp, ctx, { name: "older" });
      await run(startOp, ctx, { name: "review" });
      await run(pinOp, ctx, { path: "notes/*.md" });
      const r = await run(stopOp, ctx, {});
      expect(r).toEqual({ session: "review", stopped: true, cleared: true, pins_dropped: 1, pins_kept: 0, was_current: true, current: null, watches_ended: 0 });
      expect(await currentSession(ctx)).toBeNull();
      expect(await currentScope(ctx)).toBeNull();
      expect((await listSessions(ctx)).sessions.map((s) => s.name)).toEqual(["older"]);
      // Starting the name again is a new, empty session.
      expect(await run(startOp, ctx, { name: "review" })).toMatchObject({ resumed: false, session: { pins: 0 } });
    });

    it("with clear false keeps the session and its pins for a later start", async () => {
      const { ctx } = await tenant();
      await run(startOp, ctx, { name: "keep-me" });
      await run(pinOp, ctx, { path: "docs/**" });
      expect(await run(stopOp, ctx, { clear: false })).toMatchObject({ session: "keep-me", cleared: false, pins_kept: 1, pins_dropped: 0, current: null });
      expect(await currentScope(ctx)).toBeNull();
      await refused(run(pinOp, ctx, { path: "x/**" }), "no_active_session");
      expect(await run(startOp, ctx, { name: "keep-me" })).toMatchObject({ resumed: true, session: { pins: 1 } });
      expect(await currentScope(ctx)).toEqual({ patterns: ["docs/**"], hashes: [] });
    });

    it("stops a named session that is not current, leaving the current one alone", async () => {
      const { ctx } = await tenant();
      await run(startOp, ctx, { name: "a" });
      await run(startOp, ctx, { name: "b" });
      expect(await run(stopOp, ctx, { name: "a" })).toMatchObject({ session: "a", was_current: false, current: "b" });
      expect((await currentSession(ctx))?.name).toBe("b");
    });

    it("refuses without a current session, and an unknown name is not_found", async () => {
      const { ctx } = await tenant();
      await refused(run(stopOp, ctx, {}), "no_active_session");
      await run(startOp, ctx, { name: "real" });
      const before = await state(ctx);
      await refused(run(stopOp, ctx, { name: "imaginary" }), "not_found");
      expect(stopOp.params.safeParse({ clear: "no" }).success).toBe(false);
      await refused(run(stopOp, ctx, { name: "bad;name" }), "invalid_input");
      expect(await state(ctx)).toEqual(before);
    });
  });

  describe("pin", () => {
    it("pins a glob, answers the live documents it matches, and feeds currentScope", async () => {
      const { ctx } = await tenant();
      const a = await put(ctx, "notes/a.md");
      const b = await put(ctx, "notes/sub/b.md");
      await put(ctx, "notes/c.txt");
      await put(ctx, "other/d.md");
      await put(ctx, "notes/.hidden.md");
      await put(ctx, "notes/gone.md");
      await deleteDocument(ctx, { path: "notes/gone.md" });
      await run(startOp, ctx, { name: "review" });

      const r = await run(pinOp, ctx, { path: "notes/**/*.md" });
      expect(r.session).toBe("review");
      expect(r.pinned).toEqual([
        { path: "notes/.hidden.md", hash: expect.any(String) },
        { path: "notes/a.md", hash: a.hash },
        { path: "notes/sub/b.md", hash: b.hash },
      ]);
      expect(r).toMatchObject({ matched: 3, total_pins: 1, added: [{ kind: "path", value: "notes/**/*.md" }], already_pinned: [] });
      expect(r.note).toBeUndefined();

      // A leading slash (the seed's own paths) pins the stored form; pinning again adds nothing.
      const again = await run(pinOp, ctx, { path: "/notes/**/*.md" });
      expect(again).toMatchObject({ matched: 3, total_pins: 1, added: [], already_pinned: [{ kind: "path", value: "notes/**/*.md" }] });

      const one = await run(pinOp, ctx, { path: "other/d.md" });
      expect(one).toMatchObject({ matched: 1, total_pins: 2 });
      expect(await currentScope(ctx)).toEqual({ patterns: ["notes/**/*.md", "other/d.md"], hashes: [] });
    });

    it("keeps a glob that matches nothing yet and says so", async () => {
      const { ctx } = await tenant();
      await put(ctx, "notes/a.md");
      await run(startOp, ctx, { name: "s" });
      const r = await run(pinOp, ctx, { path: "plans/*.md" });
      expect(r).toMatchObject({ pinned: [], matched: 0, total_pins: 1 });
      expect(r.note).toContain("matches no live document now");
      expect(await currentScope(ctx)).toEqual({ patterns: ["plans/*.md"], hashes: [] });
    });

    it("pins by full hash or an 8+ character prefix, expanding a prefix to the full hashes it names", async () => {
      const { ctx } = await tenant();
      const a = await put(ctx, "a.md", "alpha");
      const copy = await put(ctx, "copy/a.md", "alpha");
      const b = await put(ctx, "b.md", "beta");
      expect(copy.hash).toBe(a.hash);
      await run(startOp, ctx, { name: "s" });

      const byPrefix = await run(pinOp, ctx, { hash: a.hash.slice(0, 8).toUpperCase() });
      expect(byPrefix).toMatchObject({ matched: 2, added: [{ kind: "hash", value: a.hash }], total_pins: 1 });
      expect(byPrefix.pinned.map((d: Out) => d.path).sort()).toEqual(["a.md", "copy/a.md"]);

      const full = await run(pinOp, ctx, { hash: b.hash });
      expect(full).toMatchObject({ matched: 1, pinned: [{ path: "b.md", hash: b.hash }], total_pins: 2 });

      // A full hash nobody has yet is kept (content added later is covered); a prefix of nothing is not.
      const future = "f".repeat(64);
      expect(await run(pinOp, ctx, { hash: future })).toMatchObject({ matched: 0, total_pins: 3 });
      expect(await currentScope(ctx)).toEqual({ patterns: [], hashes: [a.hash, b.hash, future] });
      const before = await state(ctx);
      await refused(run(pinOp, ctx, { hash: "00000000" }), "not_found");
      await refused(run(pinOp, ctx, { hash: "zzzzzzzz" }), "invalid_input");
      expect(pinOp.params.safeParse({ hash: "abc" }).success).toBe(false);
      expect(pinOp.params.safeParse({ hash: "a".repeat(65) }).success).toBe(false);
      expect(await state(ctx)).toEqual(before);
    });

    it("refuses without a current session, and with neither or both of path and hash, changing nothing", async () => {
      const { ctx } = await tenant();
      await put(ctx, "a.md");
      const e = await refused(run(pinOp, ctx, { path: "**" }), "no_active_session");
      expect(e.hint).toContain("start");
      expect((await listSessions(ctx)).sessions).toEqual([]);

      await run(startOp, ctx, { name: "s" });
      const before = await state(ctx);
      await refused(run(pinOp, ctx, {}), "invalid_input");
      await refused(run(pinOp, ctx, { path: "a.md", hash: "a".repeat(64) }), "invalid_input");
      await refused(run(pinOp, ctx, { path: "///" }), "invalid_input");
      expect(pinOp.params.safeParse({ path: "x".repeat(1025) }).success).toBe(false);
      expect(pinOp.params.safeParse({ path: "a", session: "s" }).success).toBe(false);
      expect(await state(ctx)).toEqual(before);
    });

    it(`keeps at most ${MAX_PINS_PER_SESSION} pins per session`, async () => {
      const { ctx } = await tenant();
      await run(startOp, ctx, { name: "s" });
      for (let i = 0; i < MAX_PINS_PER_SESSION; i++) await run(pinOp, ctx, { path: `p${i}/**` });
      const before = await state(ctx);
      await refused(run(pinOp, ctx, { path: "one-more/**" }), "too_many_pins");
      expect(await state(ctx)).toEqual(before);
      // Repinning something already pinned is not a new pin.
      expect((await run(pinOp, ctx, { path: "p0/**" })).total_pins).toBe(MAX_PINS_PER_SESSION);
    });

    it("keeps every one of 20 concurrent pins", async () => {
      const { ctx } = await tenant();
      await put(ctx, "race/0.md");
      await run(startOp, ctx, { name: "racy" });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => run(pinOp, ctx, { path: `race/${i}.md` })));
      expect(results.every((r) => r.session === "racy")).toBe(true);
      expect(results.map((r) => r.total_pins).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const scope = await currentScope(ctx);
      expect(scope?.patterns.slice().sort()).toEqual(Array.from({ length: 20 }, (_, i) => `race/${i}.md`).sort());
    });

    it("admits exactly the session cap when starts race", async () => {
      const { ctx } = await tenant();
      const outcomes = await Promise.allSettled(Array.from({ length: MAX_SESSIONS_PER_ACTOR + 5 }, (_, i) => run(startOp, ctx, { name: `r${i}` })));
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(MAX_SESSIONS_PER_ACTOR);
      const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
      expect(rejected.map((o) => (o.reason as ToolError).code)).toEqual(Array(5).fill("too_many_sessions"));
      expect((await listSessions(ctx)).sessions).toHaveLength(MAX_SESSIONS_PER_ACTOR);
    });
  });

  describe("unpin", () => {
    it("removes a glob exactly as pinned, or hashes by prefix, and answers the documents that left the scope", async () => {
      const { ctx } = await tenant();
      const a = await put(ctx, "notes/a.md");
      const b = await put(ctx, "b.md");
      await run(startOp, ctx, { name: "s" });
      await run(pinOp, ctx, { path: "notes/*.md" });
      await run(pinOp, ctx, { hash: b.hash });

      const byPath = await run(unpinOp, ctx, { path: "/notes/*.md" });
      expect(byPath).toEqual({ session: "s", unpinned: [{ path: "notes/a.md", hash: a.hash }], matched: 1, removed: [{ kind: "path", value: "notes/*.md" }], total_pins: 1 });
      expect(await currentScope(ctx)).toEqual({ patterns: [], hashes: [b.hash] });

      const byHash = await run(unpinOp, ctx, { hash: b.hash.slice(0, 10) });
      expect(byHash).toMatchObject({ unpinned: [{ path: "b.md", hash: b.hash }], removed: [{ kind: "hash", value: b.hash }], total_pins: 0 });
      expect(await currentScope(ctx)).toBeNull();
    });

    it("refuses what is not pinned (naming what is), and without a current session", async () => {
      const { ctx } = await tenant();
      await refused(run(unpinOp, ctx, { path: "x" }), "no_active_session");
      await run(startOp, ctx, { name: "s" });
      await run(pinOp, ctx, { path: "docs/**" });
      const before = await state(ctx);
      const e = await refused(run(unpinOp, ctx, { path: "docs/*" }), "not_found");
      expect(e.hint).toContain("path docs/**");
      await refused(run(unpinOp, ctx, { hash: "a".repeat(64) }), "not_found");
      await refused(run(unpinOp, ctx, {}), "invalid_input");
      expect(await state(ctx)).toEqual(before);
    });
  });
});

describe("currentScope", () => {
  it("is null without a session and for a session without pins", async () => {
    const { ctx } = await tenant();
    expect(await currentScope(ctx)).toBeNull();
    await run(startOp, ctx, { name: "empty" });
    expect(await currentScope(ctx)).toBeNull();
  });
});

describe("docs_session", () => {
  describe("isolation", () => {
    it("another actor of the tenant sees none of the caller's sessions", async () => {
      const { slug, ctx } = await tenant("alice");
      const bob = makeCtx(await seedIdentity(slug, "bob"));
      await put(ctx, "notes/a.md");
      await run(startOp, ctx, { name: "shared-name" });
      await run(pinOp, ctx, { path: "notes/**" });

      expect(await currentScope(bob)).toBeNull();
      expect(await listSessions(bob)).toEqual({ current: null, sessions: [] });
      await refused(run(stopOp, bob, { name: "shared-name" }), "not_found");
      await refused(run(pinOp, bob, { path: "**" }), "no_active_session");
      await refused(run(unpinOp, bob, { path: "notes/**" }), "no_active_session");
      // The same name is Bob's own, separate session.
      expect(await run(startOp, bob, { name: "shared-name" })).toMatchObject({ resumed: false, session: { pins: 0 } });
      await run(stopOp, bob, {});
      expect(await currentScope(ctx)).toEqual({ patterns: ["notes/**"], hashes: [] });
    });

    it("another tenant neither sees the sessions nor matches the documents", async () => {
      const one = await tenant("agent");
      const two = await tenant("agent");
      const doc = await put(one.ctx, "secret/plan.md");
      await run(startOp, one.ctx, { name: "s" });
      await run(pinOp, one.ctx, { path: "secret/**" });

      expect(await currentScope(two.ctx)).toBeNull();
      await refused(run(stopOp, two.ctx, { name: "s" }), "not_found");
      await run(startOp, two.ctx, { name: "s" });
      expect(await run(pinOp, two.ctx, { path: "secret/**" })).toMatchObject({ pinned: [], matched: 0 });
      await refused(run(pinOp, two.ctx, { hash: doc.hash.slice(0, 12) }), "not_found");
      expect(await run(pinOp, two.ctx, { hash: doc.hash })).toMatchObject({ pinned: [], matched: 0 });
      expect(await currentScope(one.ctx)).toEqual({ patterns: ["secret/**"], hashes: [] });
    });
  });
});
