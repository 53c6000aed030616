/** The global keyword search: every indexed kind, ranking, the trigram top-up, limits, tenancy, freshness. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/db/ids";
import { SEARCH_CANDIDATES } from "../../src/work/search/model";
import { call, count, newWorld, ok, refusedWithoutWrites, type Structured, type World } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const world = (name: string) => newWorld(`wse-${name}`, { start: T0 });

type Item = {
  object_type: string;
  object_id: string;
  title: string;
  snippet: string;
  rank: number;
  score: number;
  match: string;
  project_id: string | null;
  on?: { object_type: string; object_id: string };
};
const search = async (w: World, args: Structured): Promise<{ items: Item[]; mode: string }> => (await ok(w.ctx, "search", args)) as never;
const ids = (r: { items: Item[] }) => r.items.map((i) => i.object_id);

/** Knowledge notes have no tool in this build yet; rows go in the way the knowledge room will write them. */
async function addNote(w: World, title: string, body: string, projectId: string | null = null): Promise<string> {
  const id = uuidv7();
  await env.DB.prepare(`INSERT INTO knowledge_notes (id, tenant_id, project_id, title, body, created_by, created_at, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(id, w.id.tenantId, projectId, title, body, w.id.actorId, T0, w.id.actorId, T0)
    .run();
  return id;
}

describe("search", () => {
  describe("search finds every kind of object", () => {
    it("projects, tasks, decisions, notes, comments, work requests and change events, each with its title, snippet and project", async () => {
      const w = await world("kinds");
      const project = (await ok(w.ctx, "project_create", { title: "Zephyr billing", key: "ZEPH", summary: "Invoices for the zephyr tier" })).project;
      const task = (await ok(w.ctx, "task_create", { project_id: "ZEPH", title: "Zephyr invoice rounding", body: "Totals drift by a cent." })).task;
      const decision = (await ok(w.ctx, "decision_log", { project_id: "ZEPH", title: "Zephyr currency", choice: "Store cents as integers", rationale: "No float drift" })).decision;
      const note = await addNote(w, "Zephyr runbook", "Restart the zephyr worker when invoices stall.", project.id);
      const comment = (await ok(w.ctx, "comment_add", { object_type: "task", object_id: task.id, body: "Zephyr rounding also hits refunds.\nSecond line." })).comment;
      const handoff = (await ok(w.ctx, "handoff_create", { to_actor_ids: ["me"], title: "Review zephyr rounding", body: "Please check", related_project_id: "ZEPH" })).handoff;
      const event = await ok(w.ctx, "log_change", { entity_path: "src/billing/zephyr.ts", change_type: "modify", reasoning: "Round zephyr totals half-even to stop drift", diff: "+ roundHalfEven()" });

      const r = await search(w, { q: "zephyr" });
      expect(r.mode).toBe("words+trigram");
      expect(r.items.every((i) => i.match === "words")).toBe(true);
      const byType = Object.fromEntries(r.items.map((i) => [i.object_type, i]));
      expect(Object.keys(byType).sort()).toEqual(["comment", "decision", "event", "note", "project", "task", "work_request"]);
      expect(byType.project).toMatchObject({ object_id: project.id, title: "Zephyr billing", project_id: project.id, match: "words" });
      expect(byType.task).toMatchObject({ object_id: task.id, title: "Zephyr invoice rounding", project_id: project.id });
      expect(byType.decision).toMatchObject({ object_id: decision.id, title: "Zephyr currency", project_id: project.id });
      expect(byType.note).toMatchObject({ object_id: note, title: "Zephyr runbook", project_id: project.id });
      expect(byType.note!.snippet).toContain("**zephyr**");
      // A comment has no title of its own: its first line stands in, and `on` says where it is.
      expect(byType.comment).toMatchObject({ object_id: comment.id, title: "Zephyr rounding also hits refunds.", project_id: project.id, on: { object_type: "task", object_id: task.id } });
      expect(byType.work_request).toMatchObject({ object_id: handoff.id, title: "Review zephyr rounding", project_id: project.id });
      expect(byType.event).toMatchObject({ object_id: event.id, title: "src/billing/zephyr.ts", project_id: null });
      expect(byType.event!.snippet).toContain("modify: Round **zephyr**");
      expect(r.items.map((i) => i.rank)).toEqual(r.items.map((_, n) => n + 1));
      for (const i of r.items) expect(i.on === undefined).toBe(i.object_type !== "comment");

      const filtered = await search(w, { q: "zephyr", object_types: ["task", "note"] });
      expect(filtered.items.map((i) => i.object_type).sort()).toEqual(["note", "task"]);
      const inProject = await search(w, { q: "zephyr", project_id: "ZEPH" });
      expect(inProject.items.map((i) => i.object_type)).not.toContain("event");
      expect(inProject.items).toHaveLength(6);
    });

    it("matches word forms (stemmed), needs every word, and takes key and body text", async () => {
      const w = await world("words");
      const project = (await ok(w.ctx, "project_create", { title: "Ingest", key: "INGX", description: "Pipelines that retry uploads" })).project;
      const r = await search(w, { q: "retrying upload" });
      expect(ids(r)).toEqual([project.id]);
      expect((await search(w, { q: "ingx" })).items[0]!.object_id).toBe(project.id);
      expect((await search(w, { q: "retrying uploads downloads" })).items).toEqual([]);
    });
  });

  describe("ranking and the trigram top-up", () => {
    it("puts a title hit above a body-only hit, whatever was written first", async () => {
      const w = await world("rank");
      await ok(w.ctx, "project_create", { title: "Rank", key: "RNK" });
      const body = (await ok(w.ctx, "task_create", { project_id: "RNK", title: "Tidy the logs", body: "the flamingo exporter writes too much, and more flamingo" })).task;
      const title = (await ok(w.ctx, "task_create", { project_id: "RNK", title: "Flamingo exporter", body: "Ship it behind a flag." })).task;
      const r = await search(w, { q: "flamingo" });
      expect(ids(r)).toEqual([title.id, body.id]);
      expect(r.items[0]!.score).toBeGreaterThan(r.items[1]!.score);
    });

    it("tops up with substring matches inside words after the word hits, never repeating one", async () => {
      const w = await world("trgm");
      await ok(w.ctx, "project_create", { title: "Net", key: "NET" });
      const exact = (await ok(w.ctx, "task_create", { project_id: "NET", title: "Backoff tuning" })).task;
      const inside = (await ok(w.ctx, "task_create", { project_id: "NET", title: "Exponential retryBackoffMs overflow" })).task;
      const ident = (await ok(w.ctx, "task_create", { project_id: "NET", title: "Unrelated", body: "see config key http.backoff_ceiling_ms" })).task;

      const r = await search(w, { q: "backoff" });
      expect(r.mode).toBe("words+trigram");
      expect(r.items[0]).toMatchObject({ object_id: exact.id, match: "words", rank: 1 });
      // unicode61 splits identifiers at "_" and ".", so backoff_ceiling_ms is a word hit too.
      const wordIds = r.items.filter((i) => i.match === "words").map((i) => i.object_id);
      expect(wordIds).toContain(ident.id);
      const sub = r.items.find((i) => i.object_id === inside.id)!;
      expect(sub).toMatchObject({ match: "trigram", rank: r.items.length });
      expect(new Set(ids(r)).size).toBe(r.items.length);

      // A fragment that is no word at all is found by trigrams alone, marked in the snippet.
      const frag = await search(w, { q: "ACKOFF_CE" });
      expect(frag.mode).toBe("words+trigram");
      expect(ids(frag)).toEqual([ident.id]);
      expect(frag.items[0]!.snippet).toContain("**");
      // Text with no words at all still searches, as a substring.
      const bnf = (await ok(w.ctx, "task_create", { project_id: "NET", title: "Grammar", body: "rules use ::= as in BNF" })).task;
      expect(await search(w, { q: "::=" })).toMatchObject({ mode: "trigram", items: [{ object_id: bnf.id, match: "trigram" }] });
    });

    it("does not top up when the word hits fill the page, nor for fragments under three characters", async () => {
      const w = await world("notop");
      await ok(w.ctx, "project_create", { title: "Top", key: "TOP" });
      await ok(w.ctx, "task_create_many", { project_id: "TOP", tasks: [{ title: "gizmo one" }, { title: "gizmo two" }, { title: "gizmos" }, { title: "agizmox" }] });
      const full = await search(w, { q: "gizmo", limit: 2 });
      expect(full).toMatchObject({ mode: "words" });
      expect(full.items).toHaveLength(2);
      const all = await search(w, { q: "gizmo" });
      expect(all.items.map((i) => i.match)).toEqual(["words", "words", "words", "trigram"]);
      expect((await search(w, { q: "gi" })).mode).toBe("words");
    });
  });

  describe("limits and bad input", () => {
    it("returns 20 by default and at most 100", async () => {
      const w = await world("limit");
      await ok(w.ctx, "project_create", { title: "Many", key: "MNY" });
      for (let b = 0; b < 2; b++) {
        await ok(w.ctx, "task_create_many", { project_id: "MNY", tasks: Array.from({ length: 60 }, (_, i) => ({ title: `walrus ${b}-${i}` })) });
      }
      expect((await search(w, { q: "walrus" })).items).toHaveLength(20);
      const max = await search(w, { q: "walrus", limit: 100 });
      expect(max.items).toHaveLength(100);
      expect(max.items[99]!.rank).toBe(100);
      const err = await call(w.ctx, "search", { q: "walrus", limit: 101 });
      expect(err.error.code).toBe("invalid_input");
    });

    it("refuses empty, blank, too long and nothing-to-search q, unknown keys and unknown kinds", async () => {
      const w = await world("bad");
      const state = () => count("SELECT COUNT(*) AS n FROM search_docs WHERE tenant_id = ?", w.id.tenantId);
      await refusedWithoutWrites(w.ctx, "search", { q: "" }, "invalid_input", state);
      await refusedWithoutWrites(w.ctx, "search", { q: "   " }, "invalid_input", state);
      await refusedWithoutWrites(w.ctx, "search", {}, "invalid_input", state);
      await refusedWithoutWrites(w.ctx, "search", { q: "x".repeat(501) }, "invalid_input", state);
      await refusedWithoutWrites(w.ctx, "search", { q: "!?" }, "invalid_input", state);
      const many = await refusedWithoutWrites(w.ctx, "search", { q: Array.from({ length: 33 }, (_, i) => `word${i}`).join(" ") }, "invalid_input", state);
      expect(many.message).toContain("33 words");
      await refusedWithoutWrites(w.ctx, "search", { q: "\u0000\u0000" }, "invalid_input", state);
      const unknown = await refusedWithoutWrites(w.ctx, "search", { q: "x", sort: "new" }, "invalid_input", state);
      expect(unknown.hint).toContain("q");
      await refusedWithoutWrites(w.ctx, "search", { q: "x", object_types: ["skill"] }, "invalid_input", state);
      await refusedWithoutWrites(w.ctx, "search", { q: "x", project_id: "NOPE" }, "not_found", state);
      expect(await ok(w.ctx, "search", { q: "x".repeat(500) })).toMatchObject({ items: [] });
    });

    it("takes FTS5 syntax, quotes and operators literally; control characters are refused", async () => {
      const w = await world("syntax");
      await ok(w.ctx, "project_create", { title: "Syntax", key: "SYN" });
      const t = (await ok(w.ctx, "task_create", { project_id: "SYN", title: 'Parse "quoted" NEAR(a b) AND c* OR -d', body: "col:umn ^start {x y}" })).task;
      for (const q of ['"quoted', "NEAR(a b)", "AND", "OR -d", "c*", "col:umn", "^start", "{x y}", 'title:"x"', "NOT", "(", '""', "*", "a AND b OR NOT c", "'; DROP TABLE tasks; --"]) {
        const r = await call(w.ctx, "search", { q });
        if (!r.ok) expect(r.error.code, q).toBe("invalid_input");
        else expect(Array.isArray(r.items), q).toBe(true);
      }
      expect(ids(await search(w, { q: '"quoted"' }))).toEqual([t.id]);
      expect(ids(await search(w, { q: "NEAR(a b)" }))).toEqual([t.id]);
      expect(ids(await search(w, { q: "col:umn" }))).toEqual([t.id]);
      // Control characters are refused for every text input, before any query is built; a tab is plain space.
      expect((await call(w.ctx, "search", { q: "\u0000quoted" })).error.code).toBe("invalid_input");
      expect((await call(w.ctx, "search", { q: "quoted\u0001\u0002" })).error.message).toContain("U+0001");
      expect(ids(await search(w, { q: "quoted\tNEAR(a" }))).toEqual([t.id]);
      expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE id = ?", t.id)).toBe(1);
    });
  });

  describe("tenancy and freshness", () => {
    it("never shows another tenant's rows, and another tenant's project is not_found", async () => {
      const a = await world("ten-a");
      const b = await world("ten-b");
      await ok(a.ctx, "project_create", { title: "Okapi A", key: "OKA" });
      const bp = (await ok(b.ctx, "project_create", { title: "Okapi B", key: "OKB" })).project;
      await ok(b.ctx, "task_create", { project_id: "OKB", title: "okapi secret task" });
      await ok(b.ctx, "log_change", { entity_path: "okapi.secret", change_type: "add", reasoning: "okapi" });
      await addNote(b, "okapi note", "okapi");
      const r = await search(a, { q: "okapi" });
      expect(r.items.map((i) => i.title)).toEqual(["Okapi A"]);
      const sub = await search(a, { q: "kap" });
      expect(sub.items.map((i) => i.title)).toEqual(["Okapi A"]);
      expect((await call(a.ctx, "search", { q: "okapi", project_id: bp.id })).error.code).toBe("not_found");
    });

    it("reflects updates: a renamed task is found by its new title only; a changed note too", async () => {
      const w = await world("fresh");
      await ok(w.ctx, "project_create", { title: "Fresh", key: "FRS" });
      const t = (await ok(w.ctx, "task_create", { project_id: "FRS", title: "Paint the quokka" })).task;
      await ok(w.ctx, "task_update", { task_id: t.id, patch: { title: "Paint the wombat" } });
      expect(ids(await search(w, { q: "quokka" }))).toEqual([]);
      expect(ids(await search(w, { q: "okk" }))).toEqual([]);
      expect(ids(await search(w, { q: "wombat" }))).toEqual([t.id]);
      // Status moves do not touch the index, and closed work stays findable.
      await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "cancelled" } });
      expect(ids(await search(w, { q: "wombat" }))).toEqual([t.id]);
      const note = await addNote(w, "Capybara care", "Feed twice a day");
      await env.DB.prepare("UPDATE knowledge_notes SET body = ? WHERE id = ?").bind("Feed thrice a day", note).run();
      expect(ids(await search(w, { q: "twice" }))).toEqual([]);
      expect(ids(await search(w, { q: "thrice" }))).toEqual([note]);
      await env.DB.prepare("DELETE FROM knowledge_notes WHERE id = ?").bind(note).run();
      expect(ids(await search(w, { q: "capybara" }))).toEqual([]);
      await ok(w.ctx, "project_update", { project_id: "FRS", patch: { summary: "now with narwhals" } });
      expect((await search(w, { q: "narwhals" })).items.map((i) => i.object_type)).toEqual(["project"]);
    });

    it("leaves out a soft-deleted project and everything in it, and brings them back on restore", async () => {
      const w = await world("deleted");
      const p = (await ok(w.ctx, "project_create", { title: "Gone axolotl", key: "GONE" })).project;
      const t = (await ok(w.ctx, "task_create", { project_id: "GONE", title: "axolotl task" })).task;
      await ok(w.ctx, "comment_add", { object_type: "task", object_id: t.id, body: "axolotl comment" });
      await ok(w.ctx, "project_create", { title: "Kept axolotl", key: "KEPT" });
      expect((await search(w, { q: "axolotl" })).items).toHaveLength(4);
      await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE id = ?").bind(T0, p.id).run();
      const r = await search(w, { q: "axolotl" });
      expect(r.items.map((i) => i.title)).toEqual(["Kept axolotl"]);
      expect((await search(w, { q: "xolot" })).items.map((i) => i.title)).toEqual(["Kept axolotl"]);
      await env.DB.prepare("UPDATE projects SET deleted_at = NULL WHERE id = ?").bind(p.id).run();
      expect((await search(w, { q: "axolotl" })).items).toHaveLength(4);
    });

    it("keeps one index row per object, and the FTS indexes consistent with it", async () => {
      const w = await world("integrity");
      await ok(w.ctx, "project_create", { title: "Integrity", key: "INT" });
      const t = (await ok(w.ctx, "task_create", { project_id: "INT", title: "one" })).task;
      for (const title of ["two", "three", "three"]) await ok(w.ctx, "task_update", { task_id: t.id, patch: { title } });
      expect(await count("SELECT COUNT(*) AS n FROM search_docs WHERE object_id = ?", t.id)).toBe(1);
      await env.DB.prepare("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')").run();
      await env.DB.prepare("INSERT INTO search_fts_trgm (search_fts_trgm) VALUES ('integrity-check')").run();
    });
  });

  describe("a word that matches more than SEARCH_CANDIDATES rows", () => {
    /** Index rows as the source tables' triggers write them, oldest first (seq grows). */
    async function index(w: World, rows: Array<{ type?: string; title: string; body: string; project?: string }>): Promise<string[]> {
      const ids = rows.map(() => uuidv7());
      const insert = env.DB.prepare("INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body) VALUES (?, ?, ?, ?, ?, ?)");
      for (let i = 0; i < rows.length; i += 500) {
        await env.DB.batch(rows.slice(i, i + 500).map((r, j) => insert.bind(w.id.tenantId, r.type ?? "event", ids[i + j], r.project ?? null, r.title, r.body)));
      }
      return ids;
    }
    /** The bm25 ranking over every match, as search ranked before the bound: what a selective query must still give. */
    const exhaustive = async (w: World, match: string, limit = 20, fts = "search_fts") =>
      (
        await env.DB.prepare(`SELECT d.object_id FROM ${fts} f JOIN search_docs d ON d.seq = f.rowid WHERE ${fts} MATCH ?1 AND d.tenant_id = ?2 ORDER BY bm25(${fts}, 10, 1.0), d.seq DESC LIMIT ?3`)
          .bind(match, w.id.tenantId, limit)
          .all<{ object_id: string }>()
      ).results.map((r) => r.object_id);

    /**
     * One tenant with more than SEARCH_CANDIDATES rows holding "nightly": old title hits, then
     * body hits with a few title hits among the newest, whose bodies grow longer as they get newer
     * (so bm25, which favours short rows, would put them oldest first); a rare word here and there.
     * Newer still: a soft-deleted project's title hits, and another tenant's.
     */
    const OLD = 50;
    const build = async () => {
      const w = await world("bound");
      const other = await world("bound-other");
      const rows = [
        ...Array.from({ length: OLD }, (_, i) => ({ title: `nightly report ${i}`, body: `nightly import of batch ${i}${i % 10 === 0 ? " with a rarelabel" : ""}` })),
        ...Array.from({ length: SEARCH_CANDIDATES + 100 }, (_, i) =>
          i % 400 === 7
            ? { title: `nightly run ${i}`, body: `nightly import of batch ${i}${" and more".repeat(i / 100)}` }
            : { title: `event ${i}`, body: `nightly import of batch ${i}${i % 500 === 0 ? " with a rarelabel" : ""}` },
        ),
      ];
      const seeded = await index(w, rows);
      const gone = (await ok(w.ctx, "project_create", { title: "Gone", key: "GONE" })).project.id as string;
      await index(
        w,
        Array.from({ length: 5 }, (_, i) => ({ type: "task", title: `nightly hidden ${i}`, body: "", project: gone })),
      );
      await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE id = ?").bind(T0, gone).run();
      const others = await index(
        other,
        Array.from({ length: 5 }, (_, i) => ({ title: `nightly elsewhere ${i}`, body: "nightly import" })),
      );
      // The documented order over the newest SEARCH_CANDIDATES visible matches: title matches, then the rest, newest first.
      const window = seeded
        .map((id, i) => ({ id, title: rows[i]!.title }))
        .slice(-SEARCH_CANDIDATES)
        .reverse();
      const expected = [...window.filter((r) => r.title.startsWith("nightly")), ...window.filter((r) => !r.title.startsWith("nightly"))].map((r) => r.id);
      return { w, other, seeded, others, expected, newest: window.map((r) => r.id) };
    };
    let built: ReturnType<typeof build> | undefined;
    const fixture = () => (built ??= build());

    it("ranks a selective query over all its matches by bm25, as before, even when one of its words is common", async () => {
      const { w, seeded } = await fixture();
      const rare = await search(w, { q: "rarelabel", limit: 20 });
      expect(ids(rare)).toEqual(await exhaustive(w, '"rarelabel"'));
      expect(ids(rare)).toEqual(expect.arrayContaining([seeded[0], seeded[10]]));
      expect(rare.items[0]!.score).not.toBe(1);
      const mixed = await search(w, { q: "nightly rarelabel", limit: 20 });
      expect(ids(mixed)).toEqual(await exhaustive(w, '"nightly" "rarelabel"'));
      expect(ids(mixed)).toEqual(expect.arrayContaining([seeded[0], seeded[10]]));
      // The filters bound their own matches: five rows of kind task are ranked by bm25 (and the deleted project's stay hidden).
      expect((await search(w, { q: "nightly", object_types: ["task"] })).items).toEqual([]);
    });

    it("ranks a common word among its newest matches: title matches first, then the rest, each newest first", async () => {
      const { w, seeded, expected, newest } = await fixture();
      const common = await search(w, { q: "nightly", limit: 20 });
      expect(common.mode).toBe("words");
      expect(ids(common)).toEqual(expected.slice(0, 20));
      const titled = common.items.filter((i) => i.title.startsWith("nightly"));
      expect(titled.length).toBeGreaterThanOrEqual(5);
      expect(common.items.map((i) => i.score)).toEqual(common.items.map((i) => (i.title.startsWith("nightly") ? 1 : 0)));
      // The old title hits are past the bound.
      expect(common.items.some((i) => i.title.startsWith("nightly report"))).toBe(false);
      expect(ids(common)).not.toEqual(expect.arrayContaining([seeded[0]]));
      // A title match holds every word of q in the title: none holds "import", so two words rank newest first.
      expect(ids(await search(w, { q: "nightly import", limit: 100 }))).toEqual(newest.slice(0, 100));
    });

    it("keeps tenants apart and a soft-deleted project hidden on the common path", async () => {
      const { w, other, others, expected } = await fixture();
      const common = await search(w, { q: "nightly", limit: 100 });
      expect(common.items.some((i) => /hidden|elsewhere/.test(i.title))).toBe(false);
      expect(ids(common)).toEqual(expected.slice(0, 100));
      // The other tenant's five matches are its own, ranked by bm25 (equal rows: newest first).
      expect(ids(await search(other, { q: "nightly" }))).toEqual([...others].reverse());
    });

    it("ranks a common fragment on the trigram index the same way, and a rare one by bm25", async () => {
      const { w, expected } = await fixture();
      const frag = await search(w, { q: "ightl", limit: 20 });
      expect(frag.items.every((i) => i.match === "trigram")).toBe(true);
      expect(ids(frag)).toEqual(expected.slice(0, 20));
      expect(frag.items[0]!.snippet).toContain("**");
      const rare = await search(w, { q: "relabe", limit: 20 });
      expect(rare.items.every((i) => i.match === "trigram")).toBe(true);
      expect(ids(rare)).toEqual(await exhaustive(w, '"relabe"', 20, "search_fts_trgm"));
    });
  });
});
