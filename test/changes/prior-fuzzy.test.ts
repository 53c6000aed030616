/**
 * prior_attempts beyond the exact path: the seed's `fuzzy` (change events recalled by meaning
 * through the semantic layer) and near-identical entity names (users.email / user.email). Tests
 * run on the local embedder and D1 vector index, behind the same interface as Workers AI and
 * Vectorize; settle() waits for the embeddings made after each write's response.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { nameKeySql } from "../../src/changes/paths";
import { LOCAL_NO_MATCH, NEAR_NAMES_SQL } from "../../src/changes/prior-attempts";
import { backfillEmbeddings } from "../../src/search/semantic";
import { count, MINUTE, newWorld, ok, refusedWithoutWrites, settle, type Structured } from "../support/helpers";

const T0 = "2026-06-01T12:00:00.000Z";

async function log(ctx: Ctx, args: Record<string, unknown>): Promise<string> {
  return (await ok(ctx, "log_change", args)).id as string;
}

async function prior(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return ok(ctx, "prior_attempts", args);
}

const rows = (r: Structured) => r.items as Structured[];

/** A payment-token column added and reverted a few hours later, plus unrelated history. */
async function cardTokenHistory(ctx: Ctx, clock: { advance(ms: number): void }): Promise<{ added: string }> {
  const added = await log(ctx, {
    entity_path: "users.card_token",
    change_type: "add",
    entity_type: "column",
    reasoning: "store the tokenized payment card credentials on the users table for one-click checkout",
  });
  clock.advance(3 * 60 * MINUTE);
  await log(ctx, { entity_path: "users.card_token", change_type: "remove", reasoning: "PCI scope: card tokens now live only in the provider vault" });
  clock.advance(MINUTE);
  await log(ctx, { entity_path: "cache.sessions", change_type: "add", reasoning: "a redis layer in front of session lookups cut p99 latency" });
  clock.advance(MINUTE);
  await log(ctx, { entity_path: "cache.sessions", change_type: "remove", reasoning: "redis was flaky in staging, back to direct reads" });
  await settle(ctx);
  return { added };
}

describe("prior_attempts", () => {
  describe("fuzzy (the seed's semantic recall)", () => {
    it("finds an attempt by meaning when the caller does not know the entity's name, with its inferred outcome", async () => {
      const w = await newWorld("fz-happy", { start: T0 });
      const { added } = await cardTokenHistory(w.ctx, w.clock);

      const r = await prior(w.ctx, { fuzzy: "tokenized payment credentials" });
      expect(r.note).toBe("");
      const found = rows(r);
      expect(found.map((a) => a.entity_path)).toEqual(["users.card_token"]);
      expect(found[0]).toMatchObject({
        id: added,
        outcome: "reverted",
        confidence: "proximity_high",
        match_type: "fuzzy",
        outcome_reasoning: "PCI scope: card tokens now live only in the provider vault",
      });
      expect(found[0]!.similarity).toBeGreaterThan(0);
      expect(found[0]!.similarity).toBeLessThanOrEqual(1);
    });

    it("lists exact matches first, then fuzzy ones, without repeating a row", async () => {
      const w = await newWorld("fz-order", { start: T0 });
      await cardTokenHistory(w.ctx, w.clock);
      const r = rows(await prior(w.ctx, { entity_path: "cache.sessions", fuzzy: "tokenized payment card credentials on the users table" }));
      expect(r.map((a) => [a.entity_path, a.match_type])).toEqual([
        ["cache.sessions", "exact"],
        ["users.card_token", "fuzzy"],
      ]);
      // The path already answered exactly is not listed again as a fuzzy match.
      const same = rows(await prior(w.ctx, { entity_path: "users.card_token", fuzzy: "tokenized payment credentials" }));
      expect(same.map((a) => a.match_type)).toEqual(["exact"]);
    });

    it("follows a rename: the attempt made under the old name is found by meaning and still inferred as undone", async () => {
      const w = await newWorld("fz-rename", { start: T0 });
      const added = await log(w.ctx, { entity_path: "users.card_token", change_type: "add", reasoning: "keep tokenized payment credentials for repeat purchases" });
      w.clock.advance(MINUTE);
      await log(w.ctx, { entity_path: "users.payment_token", change_type: "rename", rename_from: "users.card_token", reasoning: "naming: it holds any payment method now" });
      w.clock.advance(MINUTE);
      await log(w.ctx, { entity_path: "users.payment_token", change_type: "remove", reasoning: "moved to the provider vault" });
      await settle(w.ctx);
      const r = rows(await prior(w.ctx, { fuzzy: "tokenized payment credentials" }));
      expect(r.find((a) => a.id === added)).toMatchObject({ match_type: "fuzzy", outcome: "reverted", outcome_reasoning: "moved to the provider vault" });
    });

    it('is off by default: no fuzzy key and fuzzy "" answer exactly as without it', async () => {
      const w = await newWorld("fz-off", { start: T0 });
      await cardTokenHistory(w.ctx, w.clock);
      const plain = await prior(w.ctx, { entity_path: "cache.sessions", min_confidence: "proximity_low" });
      const empty = await prior(w.ctx, { entity_path: "cache.sessions", min_confidence: "proximity_low", fuzzy: "" });
      expect(empty).toEqual(plain);
      expect(rows(plain).every((a) => a.match_type === "exact" && a.similarity === 0)).toBe(true);
      expect(plain.note).toBe("");
    });

    it("refuses a fuzzy that is not a string, or too long, as invalid_input, and writes nothing", async () => {
      const w = await newWorld("fz-bad", { start: T0 });
      await cardTokenHistory(w.ctx, w.clock);
      const state = () => Promise.all([count(`SELECT COUNT(*) AS n FROM tool_calls WHERE tenant_id = ?`, w.id.tenantId), count(`SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?`, w.id.tenantId)]);
      for (const fuzzy of [true, 42, ["payment"], "x".repeat(4097)]) {
        const e = await refusedWithoutWrites(w.ctx, "prior_attempts", { entity_path: "users", fuzzy }, "invalid_input", state);
        expect(e.message).toContain("fuzzy");
      }
      // Blank fuzzy with nothing else is still no target.
      await refusedWithoutWrites(w.ctx, "prior_attempts", { fuzzy: "   " }, "missing_target", state);
    });

    it("never returns another tenant's events", async () => {
      const a = await newWorld("fz-iso-a", { start: T0 });
      const b = await newWorld("fz-iso-b", { start: T0 });
      await cardTokenHistory(b.ctx, b.clock);
      const mine = await log(a.ctx, { entity_path: "orders.total", change_type: "add", reasoning: "denormalised order totals for the invoice list" });
      await settle(a.ctx);

      const forA = rows(await prior(a.ctx, { fuzzy: "tokenized payment credentials", min_confidence: "proximity_low" }));
      expect(forA.map((r) => r.entity_path)).not.toContain("users.card_token");
      const ownOnly = rows(await prior(a.ctx, { fuzzy: "order totals invoice payment credentials", min_confidence: "proximity_low" }));
      expect(ownOnly.map((r) => r.id)).toEqual([mine]);
      // B still finds its own.
      expect(rows(await prior(b.ctx, { fuzzy: "tokenized payment credentials" })).map((r) => r.entity_path)).toEqual(["users.card_token"]);
    });

    it("queues every change event it writes for embedding, the two halves of a rename included; the backfill embeds what is left", async () => {
      const w = await newWorld("fz-embed", { start: T0 });
      // Written while the embedder is unavailable: queued, not embedded.
      const down: Ctx = { ...w.ctx, env: { ...w.ctx.env, SEMANTIC_SEARCH: "off" } };
      const id = await log(down, { entity_path: "users.email", change_type: "add", reasoning: "log in by email" });
      const created = await log(down, { entity_path: "users.login_email", change_type: "rename", rename_from: "users.email", reasoning: "clearer name" });
      await settle(w.ctx);
      const queued = `SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND object_type = 'change_event' AND status = ?`;
      expect(await count(queued, w.id.tenantId, "pending")).toBe(3);
      // Until the embedding is made, fuzzy says which events it cannot see yet.
      const before = await prior(w.ctx, { fuzzy: "log in by email", min_confidence: "proximity_low" });
      expect(before.note).toBe(`${LOCAL_NO_MATCH}; 3 change event(s) still waiting for an embedding are not matched by fuzzy until the backfill runs; fell back to substring`);
      // Meanwhile the words themselves still find them.
      expect([...new Set(rows(before).map((r) => r.match_type))]).toEqual(["substring"]);
      await backfillEmbeddings(env, new Date(T0));
      expect(await count(queued, w.id.tenantId, "ready")).toBe(3);
      expect(rows(await prior(w.ctx, { fuzzy: "log in by email", min_confidence: "proximity_low" })).map((r) => r.id)).toContain(id);
      const vectors = await env.DB.prepare(`SELECT id FROM local_vectors WHERE namespace = ? ORDER BY id`).bind(w.id.tenantId).all<{ id: string }>();
      expect(vectors.results.map((v) => v.id)).toEqual(expect.arrayContaining([`change_event:${id}`, `change_event:${created}`]));
    });

    it("says in its note when the local embedder could not match by meaning, and falls back to substring", async () => {
      const w = await newWorld("fz-local", { start: T0 });
      await cardTokenHistory(w.ctx, w.clock);
      // The same idea as the card-token column in other words: a model would relate them; word hashing cannot.
      const r = await prior(w.ctx, { fuzzy: "gdpr erasure of shopper billing info" });
      expect(r.note).toBe(`${LOCAL_NO_MATCH}; fell back to substring`);
      expect(r.note).toContain("could not match by meaning");
      expect(rows(r)).toEqual([]);
      // What it does match (shared words) still answers without the note.
      expect((await prior(w.ctx, { fuzzy: "tokenized payment credentials" })).note).toBe("");
    });

    it("falls back to substring matching, and says so, when the semantic layer is off", async () => {
      const w = await newWorld("fz-fallback", { start: T0 });
      await cardTokenHistory(w.ctx, w.clock);
      const off: Ctx = { ...w.ctx, env: { ...w.ctx.env, SEMANTIC_SEARCH: "off" } };
      const r = await prior(off, { fuzzy: "provider vault" });
      expect(r.note).toMatch(/^fuzzy matching unavailable \(semantic search is switched off.*\); fell back to substring$/);
      expect(rows(r).map((a) => [a.entity_path, a.match_type, a.outcome])).toEqual([["users.card_token", "substring", "reverted"]]);
    });
  });

  describe("on near-identical entity names", () => {
    it("answers users.email with the attempts logged as user.email, marked near_name, after the exact ones", async () => {
      const w = await newWorld("nn-plural", { start: T0 });
      const exact = await log(w.ctx, { entity_path: "users.email", change_type: "add", reasoning: "email login for the web app" });
      w.clock.advance(MINUTE);
      await log(w.ctx, { entity_path: "users.email", change_type: "remove", reasoning: "login by email broke SSO" });
      w.clock.advance(MINUTE);
      const near = await log(w.ctx, { entity_path: "user.email", change_type: "add", reasoning: "email login again, on the singular table name" });
      w.clock.advance(MINUTE);
      await log(w.ctx, { entity_path: "user.email", change_type: "remove", reasoning: "still breaks SSO" });
      const r = rows(await prior(w.ctx, { entity_path: "users.email" }));
      expect(r.map((a) => [a.id, a.match_type, a.outcome])).toEqual([
        [exact, "exact", "reverted"],
        [near, "near_name", "reverted"],
      ]);
      expect(r[1]!.note).toBe("a near-identical name of users.email");
      expect(r[1]!.outcome_reasoning).toBe("still breaks SSO");
    });

    it("matches case and separator differences, and nothing that is merely similar", async () => {
      const w = await newWorld("nn-case", { start: T0 });
      const remove = (path: string) => log(w.ctx, { entity_path: path, change_type: "remove", reasoning: "undone" });
      const tried: Record<string, string> = {};
      for (const path of ["src/Auth.py::login", "src/auth.py:login", "users.email_verified", "user.mail", "src/auth.py", "src/auth.py::logins2", "src/oauth.py::login"]) {
        tried[path] = await log(w.ctx, { entity_path: path, change_type: "add", reasoning: "tried once" });
        w.clock.advance(MINUTE);
        await remove(path);
        w.clock.advance(MINUTE);
      }
      const r = rows(await prior(w.ctx, { entity_path: "src/auth.py::login" }));
      expect(r.map((a) => a.entity_path).sort()).toEqual(["src/Auth.py::login", "src/auth.py:login"]);
      expect(r.every((a) => a.match_type === "near_name" && a.outcome === "reverted")).toBe(true);
      expect(rows(await prior(w.ctx, { entity_path: "users.email" }))).toEqual([]);
    });

    it("looks near names up through the tenant's name-key index, whose expression is nameKeySql's", async () => {
      const index = await env.DB.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'events_tenant_name_key_idx'`).first<{ sql: string }>();
      expect(index?.sql).toContain(`(tenant_id, ${nameKeySql("entity_path")}, entity_path)`);
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${NEAR_NAMES_SQL}`).bind("t", "users.email", 50).all<{ detail: string }>();
      expect(plan.results.map((p) => p.detail).join("\n")).toContain("events_tenant_name_key_idx");
    });

    it("never crosses tenants", async () => {
      const a = await newWorld("nn-iso-a", { start: T0 });
      const b = await newWorld("nn-iso-b", { start: T0 });
      await log(b.ctx, { entity_path: "user.email", change_type: "add", reasoning: "b's column" });
      b.clock.advance(MINUTE);
      await log(b.ctx, { entity_path: "user.email", change_type: "remove", reasoning: "b undid it" });
      expect(rows(await prior(a.ctx, { entity_path: "users.email", min_confidence: "proximity_low" }))).toEqual([]);
      expect(rows(await prior(b.ctx, { entity_path: "users.email" })).map((r) => r.match_type)).toEqual(["near_name"]);
    });
  });
});
