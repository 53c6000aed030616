/** log_change: the change ledger's only writer, through the registry (strict inputs, envelope, idempotency). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/db/ids";
import type { Ctx } from "../../src/core/context";
import { stableStringify } from "../../src/core/idempotency";
import { inSession } from "../support/run-helpers";
import { call, count, DAY, fails, makeCtx, MINUTE, ok, seedIdentity, TestClock, type Structured, type TestIdentity } from "../support/helpers";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FIXED_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const WHY = "Needed so password reset emails reach the user";

interface Setup {
  id: TestIdentity;
  clock: TestClock;
  ctx: Ctx;
  /** Events stored for this tenant. */
  events(): Promise<number>;
}

async function setup(tenant: string, actor = "claude-code", sessionId = "sess-default"): Promise<Setup> {
  const id = await seedIdentity(tenant, actor);
  const clock = new TestClock();
  const ctx = makeCtx(id, clock, sessionId);
  return { id, clock, ctx, events: () => count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", id.tenantId) };
}

/** Asserts log_change fails with `code` and writes nothing. */
async function rejects(s: Setup, args: unknown, code: string) {
  const before = await s.events();
  const r = await call(s.ctx, "log_change", args);
  expect(r.isError, JSON.stringify(r)).toBe(true);
  expect(r.ok).toBe(false);
  expect(r.error.code).toBe(code);
  expect(typeof r.error.message).toBe("string");
  expect(typeof r.error.hint).toBe("string");
  expect(r.error.hint.length).toBeGreaterThan(0);
  expect(typeof r.error.retryable).toBe("boolean");
  expect(await s.events()).toBe(before);
  return r.error as { code: string; message: string; hint: string; retryable: boolean };
}

interface RawRow {
  seq: number;
  id: string;
  tenant_id: string;
  timestamp: string;
  entity_path: string;
  entity_type: string;
  change_type: string;
  diff: string;
  reasoning: string;
  agent: string;
  actor_id: string;
  session_id: string;
  git_commit: string;
  project: string;
  changeset_id: string;
  metadata: string;
  revisit_after: string;
  revisit_due: string;
  expires_when: string;
  stale_when: string;
  supersedes: string;
  constraint: string;
}

const rowById = (id: string) => env.DB.prepare("SELECT * FROM events WHERE id = ?").bind(id).first<RawRow>();
const rowsOf = async (tenantId: string) => (await env.DB.prepare("SELECT * FROM events WHERE tenant_id = ? ORDER BY seq").bind(tenantId).all<RawRow>()).results;

const warned = (r: Structured, re: RegExp) => (r.warnings as string[]).some((w) => re.test(w));
const log = (ctx: Ctx, args: Record<string, unknown>) => ok(ctx, "log_change", { reasoning: WHY, ...args });

describe("log_change", () => {
  describe("happy path", () => {
    it("returns a UUIDv7 id, the clock's fixed-width timestamp and every key populated", async () => {
      const s = await setup("w-happy");
      s.clock.set("2026-03-04T05:06:07.089Z");
      const r = await call(s.ctx, "log_change", {
        entity_path: "users.email",
        entity_type: "column",
        change_type: "add",
        diff: "+ email TEXT NOT NULL",
        reasoning: WHY,
        project: "billing",
        changeset_id: "add-email",
      });
      expect(r.isError).toBe(false);
      expect(r).toMatchObject({ ok: true, timestamp: "2026-03-04T05:06:07.089Z", status: "ok", error: "", warnings: [], supersedes: "" });
      expect(r.id).toMatch(UUID_V7);
      expect(r.timestamp).toMatch(FIXED_ISO);
      expect(r).not.toHaveProperty("idempotent_replay");
      // The id's 48-bit time prefix is the clock's instant.
      const ms = parseInt(r.id.replace(/-/g, "").slice(0, 12), 16);
      expect(ms).toBe(Date.parse("2026-03-04T05:06:07.089Z"));

      const b = await ok(s.ctx, "blame", { entity_path: "users.email" });
      expect(b).toMatchObject({
        id: r.id,
        timestamp: r.timestamp,
        entity_path: "users.email",
        entity_type: "column",
        change_type: "add",
        diff: "+ email TEXT NOT NULL",
        reasoning: WHY,
        agent: "claude-code",
        session_id: "sess-default",
        git_commit: "",
        project: "billing",
        changeset_id: "add-email",
        metadata: {},
        revisit_after: "",
        expires_when: "",
        stale_when: "",
        supersedes: "",
        superseded_by: "",
        status: "active",
        error: "",
      });
      const row = await rowById(r.id);
      expect(row!.tenant_id).toBe(s.id.tenantId);
      expect(row!.actor_id).toBe(s.id.actorId);
      expect(await s.events()).toBe(1);
    });

    it("mints a new id for every call; an identical call resent at once is a retry and replays the first", async () => {
      const s = await setup("w-twice");
      const a = await log(s.ctx, { entity_path: "users.email", change_type: "modify" });
      s.clock.advance(1);
      const retry = await call(s.ctx, "log_change", { reasoning: WHY, entity_path: "users.email", change_type: "modify" });
      expect(retry).toMatchObject({ ok: true, id: a.id, idempotent_replay: true });
      expect(await s.events()).toBe(1);
      // Another event in between: the same call is a new event, with a newer, time-ordered id.
      await log(s.ctx, { entity_path: "users.name", change_type: "modify" });
      s.clock.advance(1);
      const b = await log(s.ctx, { entity_path: "users.email", change_type: "modify" });
      expect(a.id).not.toBe(b.id);
      expect(a.id < b.id).toBe(true); // time-ordered ids
      expect(await s.events()).toBe(3);
    });

    it("a retry over stateless requests replays too: the key comes from the content, not the session", async () => {
      const s = await setup("w-stateless");
      const stateless = makeCtx(s.id, s.clock, "");
      const args = { entity_path: "orders.total", change_type: "retype", reasoning: "Cents as integers avoid float rounding" };
      const a = await log(stateless, args);
      const b = await call(makeCtx(s.id, s.clock, ""), "log_change", args);
      expect(b).toMatchObject({ ok: true, id: a.id, idempotent_replay: true });
      expect(await s.events()).toBe(1);
    });
  });

  describe("change_type", () => {
    it("rejects a typo, names the valid values, suggests the closest, and writes nothing", async () => {
      const s = await setup("w-ct-typo");
      const err = await rejects(s, { entity_path: "users.email", change_type: "modfy", reasoning: WHY }, "invalid_input");
      expect(err.message).toContain("modfy");
      expect(err.message).toContain("did you mean 'modify'");
      for (const t of ["add", "remove", "modify", "rename", "retype", "create", "delete", "index_add", "index_remove", "migrate", "revert", "reject", "supersede"]) {
        expect(err.message).toContain(t);
      }
    });

    it("rejects a non-string change_type and an unrelated word with no suggestion", async () => {
      const s = await setup("w-ct-other");
      await rejects(s, { entity_path: "a.b", change_type: 3 }, "invalid_input");
      const err = await rejects(s, { entity_path: "a.b", change_type: "refactorize" }, "invalid_input");
      expect(err.message).not.toContain("did you mean");
      await rejects(s, { entity_path: "a.b", change_type: "" }, "invalid_input");
    });

    it("accepts every change_type in the vocabulary", async () => {
      const s = await setup("w-ct-all");
      const types = ["add", "remove", "modify", "rename", "retype", "create", "delete", "index_add", "index_remove", "migrate", "revert", "reject"];
      for (const change_type of types) {
        const r = await log(s.ctx, { entity_path: `t.${change_type}`, change_type });
        expect((await rowById(r.id))!.change_type).toBe(change_type);
      }
      expect(await s.events()).toBe(types.length);
    });
  });

  describe("entity_type", () => {
    it("stores an unknown entity_type as 'other' with a warning, and defaults to 'other'", async () => {
      const s = await setup("w-et");
      const unknown = await log(s.ctx, { entity_path: "users.email", change_type: "add", entity_type: "colunm" });
      expect(unknown.warnings.some((w: string) => w.includes("colunm") && w.includes("other"))).toBe(true);
      expect((await rowById(unknown.id))!.entity_type).toBe("other");

      const omitted = await log(s.ctx, { entity_path: "deps/left-pad", change_type: "add" });
      expect(omitted.warnings).toEqual([]);
      expect((await rowById(omitted.id))!.entity_type).toBe("other");

      const upper = await log(s.ctx, { entity_path: "users.name", change_type: "add", entity_type: "Column" });
      expect(upper.warnings).toEqual([]);
      expect((await rowById(upper.id))!.entity_type).toBe("column");
    });
  });

  describe("entity_path canonicalization", () => {
    it("canonicalizes on write: ./, //, backslashes and spaces; case kept", async () => {
      const s = await setup("w-canon");
      const cases: Array<[string, string]> = [
        ["./src//auth.py::login", "src/auth.py::login"],
        ["  src\\auth.py::login  ", "src/auth.py::login"],
        ["././src///auth.py::login", "src/auth.py::login"],
        [".\\src\\\\auth.py::login", "src/auth.py::login"],
        ["./Src/Auth.py::Login", "Src/Auth.py::Login"],
      ];
      for (const [given, stored] of cases) {
        const r = await log(s.ctx, { entity_path: given, change_type: "modify", entity_type: "function" });
        expect((await rowById(r.id))!.entity_path, given).toBe(stored);
      }
      // Query paths are canonicalized the same way, so every spelling is the one entity.
      const diff = await ok(s.ctx, "change_diff", { entity_path: ".\\src//auth.py::login " });
      expect(diff.items).toHaveLength(4);
      expect(diff.items.every((e: Structured) => e.entity_path === "src/auth.py::login")).toBe(true);
      const upper = await ok(s.ctx, "blame", { entity_path: "./Src//Auth.py::Login" });
      expect(upper.entity_path).toBe("Src/Auth.py::Login");
    });

    it("keeps './' as itself when stripping would leave nothing, and rejects a blank path", async () => {
      const s = await setup("w-canon-edge");
      const r = await log(s.ctx, { entity_path: "./", change_type: "modify" });
      expect((await rowById(r.id))!.entity_path).toBe("./");
      expect((await ok(s.ctx, "blame", { entity_path: "./" })).id).toBe(r.id);
      await rejects(s, { entity_path: "   ", change_type: "modify", reasoning: WHY }, "invalid_entity_path");
    });
  });

  describe("advisory warnings (never block the write)", () => {
    it("warns on entity_path shapes that do not fit the entity_type", async () => {
      const s = await setup("w-shape");
      const fn = await log(s.ctx, { entity_path: "src/auth.py", change_type: "modify", entity_type: "function" });
      expect(warned(fn, /function without '::'/)).toBe(true);
      const col = await log(s.ctx, { entity_path: "email", change_type: "modify", entity_type: "column" });
      expect(warned(col, /column without '\.'/)).toBe(true);
      const file = await log(s.ctx, { entity_path: "Makefile", change_type: "modify", entity_type: "file" });
      expect(warned(file, /file with neither a directory nor an extension/)).toBe(true);
      expect(await s.events()).toBe(3);

      for (const good of [
        { entity_path: "src/auth.py::login", entity_type: "function" },
        { entity_path: "users.email", entity_type: "column" },
        { entity_path: "build/Makefile", entity_type: "file" },
        { entity_path: "README.md", entity_type: "file" },
      ]) {
        const r = await log(s.ctx, { ...good, change_type: "modify" });
        expect(r.warnings, JSON.stringify(good)).toEqual([]);
      }
    });

    it("warns on empty, short and generic reasoning", async () => {
      const s = await setup("w-reason");
      const empty = await ok(s.ctx, "log_change", { entity_path: "a.b", change_type: "modify" });
      expect(empty.warnings.filter((w: string) => w.startsWith("reasoning"))).toEqual(["reasoning is empty: record why this change was made, not just what changed"]);
      const blank = await ok(s.ctx, "log_change", { entity_path: "a.b", change_type: "modify", reasoning: "   " });
      expect(warned(blank, /reasoning is empty/)).toBe(true);

      const short = await ok(s.ctx, "log_change", { entity_path: "a.b", change_type: "modify", reasoning: "tweak it" });
      expect(warned(short, /very short \(8 chars\)/)).toBe(true);
      expect(warned(short, /generic/)).toBe(false);

      for (const generic of ["fixed", "See diff", "DONE", "as requested", "n/a", "updated."]) {
        const r = await ok(s.ctx, "log_change", { entity_path: "a.b", change_type: "modify", reasoning: generic });
        expect(warned(r, /generic/), generic).toBe(true);
      }
      // Generic words inside a real explanation are fine.
      const fine = await ok(s.ctx, "log_change", { entity_path: "a.b", change_type: "modify", reasoning: "fixed the off-by-one in pagination cursors" });
      expect(fine.warnings).toEqual([]);
      expect(await s.events()).toBe(10);
    });

    it("nudges for revisit_after on table/schema/dependency/config decisions", async () => {
      const s = await setup("w-nudge-revisit");
      const table = await log(s.ctx, { entity_path: "users", entity_type: "table", change_type: "create" });
      expect(warned(table, /revisit_after/)).toBe(true);
      const dep = await log(s.ctx, { entity_path: "deps/stripe", entity_type: "dependency", change_type: "add" });
      expect(warned(dep, /revisit_after/)).toBe(true);
      const dated = await log(s.ctx, { entity_path: "deps/stripe", entity_type: "dependency", change_type: "modify", revisit_after: "90d" });
      expect(dated.warnings).toEqual([]);
      const column = await log(s.ctx, { entity_path: "users.email", entity_type: "column", change_type: "add" });
      expect(warned(column, /revisit_after/)).toBe(false);
      const removal = await log(s.ctx, { entity_path: "users", entity_type: "table", change_type: "delete" });
      expect(warned(removal, /revisit_after/)).toBe(false);
    });

    it("nudges reject/revert toward expires_when or stale_when, and asks a reject for its alternative", async () => {
      const s = await setup("w-nudge-reject");
      const revert = await log(s.ctx, { entity_path: "cache.ttl", change_type: "revert" });
      expect(warned(revert, /expires_when or stale_when/)).toBe(true);
      const revertWithCondition = await log(s.ctx, { entity_path: "cache.ttl", change_type: "revert", stale_when: "when redis cluster is upgraded" });
      expect(warned(revertWithCondition, /expires_when or stale_when/)).toBe(false);

      const bare = await log(s.ctx, {
        entity_path: "cache.ttl",
        change_type: "reject",
        reasoning: "Caching here caused stale balances for customers",
        expires_when: "manual:finance sign-off",
      });
      expect(warned(bare, /reject without an alternative/)).toBe(true);
      expect(warned(bare, /expires_when or stale_when/)).toBe(false);
      const withAlternative = await log(s.ctx, {
        entity_path: "cache.ttl",
        change_type: "reject",
        reasoning: "Went with write-through caching rather than a TTL",
        expires_when: "manual:finance sign-off",
      });
      expect(withAlternative.warnings).toEqual([]);
    });
  });

  describe("size bounds", () => {
    it("truncates a diff over 64KB on a character boundary with a marker and a warning", async () => {
      const s = await setup("w-size-diff");
      const diff = "a" + "é".repeat(40_000); // 80,001 bytes; the 64KB cut lands inside an 'é'
      const r = await log(s.ctx, { entity_path: "big.diff", change_type: "modify", diff });
      expect(warned(r, /^diff truncated to 64KB/)).toBe(true);
      const stored = (await rowById(r.id))!.diff;
      const m = /^([\s\S]*)…\[truncated (\d+)KB\]$/.exec(stored);
      expect(m).not.toBeNull();
      const kept = m![1]!;
      expect(kept).not.toContain("\uFFFD");
      expect(kept).toBe("a" + "é".repeat(32_767));
      expect(new TextEncoder().encode(kept).length).toBeLessThanOrEqual(65_536);
      expect(Number(m![2])).toBe(Math.ceil((80_001 - 65_535) / 1024));
      // change_diff reads back the same truncated text.
      expect((await ok(s.ctx, "change_diff", { entity_path: "big.diff" })).items[0].diff).toBe(stored);
    });

    it("truncates reasoning over 32KB without splitting an emoji", async () => {
      const s = await setup("w-size-reason");
      const reasoning = "ab" + "😀".repeat(9_000); // 36,002 bytes
      const r = await ok(s.ctx, "log_change", { entity_path: "big.reason", change_type: "modify", reasoning });
      expect(warned(r, /^reasoning truncated to 32KB/)).toBe(true);
      const stored = (await rowById(r.id))!.reasoning;
      expect(stored).toBe("ab" + "😀".repeat(8_191) + `…[truncated ${Math.ceil((36_002 - 32_766) / 1024)}KB]`);
      expect(stored).not.toContain("\uFFFD");
    });

    it("keeps text at exactly the bound untouched", async () => {
      const s = await setup("w-size-exact");
      const diff = "x".repeat(65_536);
      const reasoning = "y".repeat(32_768);
      const r = await ok(s.ctx, "log_change", { entity_path: "edge.size", change_type: "modify", diff, reasoning });
      expect(warned(r, /truncated/)).toBe(false);
      const row = (await rowById(r.id))!;
      expect(row.diff).toBe(diff);
      expect(row.reasoning).toBe(reasoning);
    });
  });

  describe("secret-shape warnings", () => {
    const secrets: Array<[string, string]> = [
      ["GitHub token", `token = "ghp_${"A1b2C3d4E5".repeat(3)}x9Y8z7"`],
      ["AWS access key", "aws_access_key_id AKIAIOSFODNN7EXAMPLE"],
      ["PEM private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"],
      ["URL with credentials", "DATABASE_URL=postgres://admin:hunter2sekret@db.internal:5432/app"],
    ];
    for (const [kind, text] of secrets) {
      it(`masks it before storing (${kind}), names the kind and field, and never echoes the secret`, async () => {
        const s = await setup(`w-secret-${kind.toLowerCase().replace(/[^a-z]+/g, "-")}`);
        const r = await log(s.ctx, { entity_path: "config/app.env", change_type: "modify", entity_type: "config", revisit_after: "90d", diff: text });
        const secretWarnings = (r.warnings as string[]).filter((w) => w.includes("ecret"));
        expect(secretWarnings).toHaveLength(1);
        expect(secretWarnings[0]).toContain(`${kind} in 'diff'`);
        const all = JSON.stringify(r);
        for (const fragment of ["ghp_A1b2", "AKIAIOSFODNN7EXAMPLE", "MIIEowIBAAKCAQEA", "hunter2sekret", "admin:"]) {
          expect(all).not.toContain(fragment);
        }
        // The write still happened, with the secret masked in what was stored.
        expect(await s.events()).toBe(1);
        const [row] = await rowsOf(s.id.tenantId);
        expect(row!.diff).toContain(`[masked: ${kind}]`);
      });

      it(`with allow_secrets stores it as given (${kind}) and warns, naming the kind but not the text`, async () => {
        const s = await setup(`w-keep-${kind.toLowerCase().replace(/[^a-z]+/g, "-")}`);
        const r = await log(s.ctx, { entity_path: "config/app.env", change_type: "modify", entity_type: "config", revisit_after: "90d", diff: text, allow_secrets: true });
        const secretWarnings = (r.warnings as string[]).filter((w) => w.includes("secret"));
        expect(secretWarnings).toHaveLength(1);
        expect(secretWarnings[0]).toContain(kind);
        expect(secretWarnings[0]).toMatch(/^diff /);
        expect(JSON.stringify(r)).not.toContain(text.slice(-12));
        const [row] = await rowsOf(s.id.tenantId);
        expect(row!.diff).toBe(text);
      });
    }

    it("masks secrets in reasoning too, naming the field", async () => {
      const s = await setup("w-secret-reason");
      const r = await ok(s.ctx, "log_change", {
        entity_path: "env/AWS_KEY",
        change_type: "modify",
        entity_type: "env_var",
        reasoning: "Rotated the key; the old one was AKIAABCDEFGHIJKLMNOP and is now revoked",
      });
      expect(r.warnings.some((w: string) => w.includes("AWS access key in 'reasoning'"))).toBe(true);
      expect(JSON.stringify(r)).not.toContain("AKIAABCDEFGHIJKLMNOP");
      const [row] = await rowsOf(s.id.tenantId);
      expect(row!.reasoning).toBe("Rotated the key; the old one was [masked: AWS access key] and is now revoked");
    });

    it("does not warn on text that merely mentions secrets", async () => {
      const s = await setup("w-secret-none");
      const r = await log(s.ctx, { entity_path: "docs/secrets.md", change_type: "modify", diff: "Tokens look like ghp_… and keys like AKIA…; never commit them." });
      expect(r.warnings).toEqual([]);
    });
  });

  describe("rename_from", () => {
    it("writes a rename on the old path and a create on the new one, atomically, returning the create", async () => {
      const s = await setup("w-rename");
      await log(s.ctx, { entity_path: "src/old_auth.py::login", entity_type: "function", change_type: "add" });
      s.clock.advance(MINUTE);
      const r = await log(s.ctx, {
        entity_path: "src/auth.py::login",
        rename_from: "./src//old_auth.py::login",
        change_type: "rename",
        entity_type: "function",
        revisit_after: "90d",
        changeset_id: "auth-split",
      });
      const rows = await rowsOf(s.id.tenantId);
      expect(rows).toHaveLength(3);
      const [, renamed, created] = rows;
      expect(renamed).toMatchObject({ entity_path: "src/old_auth.py::login", change_type: "rename", revisit_after: "", changeset_id: "auth-split" });
      expect(JSON.parse(renamed!.metadata)).toEqual({ renamed_to: "src/auth.py::login" });
      expect(created).toMatchObject({ id: r.id, entity_path: "src/auth.py::login", change_type: "create", revisit_after: "90d" });
      expect(JSON.parse(created!.metadata)).toEqual({ renamed_from: "src/old_auth.py::login" });
      expect(renamed!.timestamp).toBe(created!.timestamp);

      const blameNew = await ok(s.ctx, "blame", { entity_path: "src/auth.py::login" });
      expect(blameNew).toMatchObject({ id: r.id, change_type: "create", metadata: { renamed_from: "src/old_auth.py::login" } });
      const blameOld = await ok(s.ctx, "blame", { entity_path: "src/old_auth.py::login" });
      expect(blameOld).toMatchObject({ change_type: "rename", metadata: { renamed_to: "src/auth.py::login" } });
    });

    it("rejects rename_from without change_type rename, and a rename onto itself; nothing written", async () => {
      const s = await setup("w-rename-bad");
      const err = await rejects(s, { entity_path: "users.mail", rename_from: "users.email", change_type: "modify", reasoning: WHY }, "invalid_rename");
      expect(err.message).toBe("rename_from is only valid with change_type='rename'");
      await rejects(s, { entity_path: "users.email", rename_from: "users.email", change_type: "rename", reasoning: WHY }, "invalid_rename");
      await rejects(s, { entity_path: "src/a.py", rename_from: "./src//a.py", change_type: "rename", reasoning: WHY }, "invalid_rename");
      expect(await s.events()).toBe(0);
    });

    it("treats empty optional fields as not given, as the seed's defaults do", async () => {
      const s = await setup("w-empty-optionals");
      const r = await ok(s.ctx, "log_change", {
        entity_path: "users.email",
        change_type: "modify",
        reasoning: WHY,
        rename_from: "",
        supersedes: "",
        git_commit: "",
        revisit_after: "",
        expires_when: "",
        stale_when: "",
        project: "",
        changeset_id: "",
        session_id: "",
        agent: "",
      });
      expect(r.warnings).toEqual([]);
      const blamed = await ok(s.ctx, "blame", { entity_path: "users.email" });
      expect(blamed).toMatchObject({ change_type: "modify", git_commit: "", supersedes: "", metadata: {} });
      // A blank rename_from on a rename is a plain rename event, not the dual-event pattern.
      await ok(s.ctx, "log_change", { entity_path: "src/a.py", rename_from: "   ", change_type: "rename", reasoning: WHY });
      expect(await s.events()).toBe(2);
    });
  });

  describe("revisit_after", () => {
    it("stores an ISO date canonically and relative offsets lowercased, with the due instant", async () => {
      const s = await setup("w-revisit");
      s.clock.set("2026-06-01T12:00:00.000Z");
      const cases: Array<[string, string, string]> = [
        ["2026-12-01", "2026-12-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
        ["2027-01-15T09:30:00+02:00", "2027-01-15T07:30:00.000Z", "2027-01-15T07:30:00.000Z"],
        ["90d", "90d", new Date(Date.parse("2026-06-01T12:00:00.000Z") + 90 * DAY).toISOString()],
        ["6MO", "6mo", new Date(Date.parse("2026-06-01T12:00:00.000Z") + 180 * DAY).toISOString()],
        ["15m", "15m", "2026-06-01T12:15:00.000Z"],
        ["1y", "1y", new Date(Date.parse("2026-06-01T12:00:00.000Z") + 365 * DAY).toISOString()],
      ];
      for (const [given, stored, due] of cases) {
        const r = await log(s.ctx, { entity_path: "deps/stripe", entity_type: "dependency", change_type: "modify", revisit_after: given });
        expect(r.warnings, given).toEqual([]);
        const b = await ok(s.ctx, "blame", { entity_path: "deps/stripe" });
        expect(b.revisit_after, given).toBe(stored);
        const row = (await rowById(r.id))!;
        expect(row.revisit_due, given).toBe(due);
      }
    });

    it("rejects garbage with invalid_revisit_after and writes nothing", async () => {
      const s = await setup("w-revisit-bad");
      for (const bad of ["next quarter", "90", "d90", "2026-02-31", "2026-13-01", "-5d"]) {
        const err = await rejects(s, { entity_path: "deps/stripe", change_type: "modify", revisit_after: bad, reasoning: WHY }, "invalid_revisit_after");
        expect(err.message).toContain(bad);
        expect(err.hint).toMatch(/90d/);
      }
    });

    it("refuses a capital M as ambiguous, with a hint, wherever a duration is read", async () => {
      const s = await setup("w-revisit-capital-m");
      const err = await rejects(s, { entity_path: "deps/stripe", change_type: "modify", revisit_after: "6M", reasoning: WHY }, "invalid_input");
      expect(err.message).toMatch(/6M.*ambiguous/);
      expect(err.hint).toContain("6mo");
      expect(err.hint).toContain("6m ");
      for (const [tool, args] of [
        ["change_history", { since: "6M" }],
        ["decision_query", { since: "2 M" }],
      ] as const) {
        const e = await fails(s.ctx, tool, args);
        expect(e.code, tool).toBe("invalid_input");
        expect(e.message, tool).toContain("ambiguous");
      }
      // Months and minutes spelled out stay as they were.
      const months = await log(s.ctx, { entity_path: "deps/stripe", change_type: "modify", revisit_after: "6Mo" });
      expect((await rowById(months.id))!.revisit_after).toBe("6mo");
      expect((await ok(s.ctx, "change_history", { since: "6m" })).items).toEqual([expect.objectContaining({ id: months.id })]);
    });

    it("warns when the revisit date is already past", async () => {
      const s = await setup("w-revisit-past");
      const r = await log(s.ctx, { entity_path: "deps/stripe", entity_type: "dependency", change_type: "modify", revisit_after: "2020-01-01" });
      expect(warned(r, /already due/)).toBe(true);
    });
  });

  describe("expires_when", () => {
    it("accepts the four forms and stores them canonically", async () => {
      const s = await setup("w-expires");
      const cases: Array<[string, string]> = [
        ["entity:./users.email:changes", "entity:users.email:changes"],
        ["entity:src\\\\auth.py::login:changes", "entity:src/auth.py::login:changes"],
        ["date:2026-12-01", "date:2026-12-01T00:00:00.000Z"],
        ["date:2026-12-01T10:00:00+01:00", "date:2026-12-01T09:00:00.000Z"],
        ["library:stripe >= 9.0", "library:stripe>=9.0"],
        ["library:@scope/pkg>=1.2.3", "library:@scope/pkg>=1.2.3"],
        ["manual:  legal sign-off  ", "manual:legal sign-off"],
        ["LIBRARY:stripe>=10", "library:stripe>=10"],
      ];
      for (const [given, stored] of cases) {
        const r = await log(s.ctx, { entity_path: "billing.plan", change_type: "modify", expires_when: given });
        expect((await rowById(r.id))!.expires_when, given).toBe(stored);
        expect((await ok(s.ctx, "blame", { entity_path: "billing.plan" })).expires_when).toBe(stored);
      }
    });

    it("rejects anything else with invalid_expires_when and a hint listing the forms", async () => {
      const s = await setup("w-expires-bad");
      for (const bad of [
        "when stripe upgrades",
        "library:stripe>=latest",
        "library:stripe",
        "entity:users.email",
        "entity::changes",
        "date:tomorrow",
        "date:2026-02-30",
        "manual:",
        "manual:   ",
        "expires:soon",
      ]) {
        const err = await rejects(s, { entity_path: "billing.plan", change_type: "modify", expires_when: bad, reasoning: WHY }, "invalid_expires_when");
        for (const form of ["library:NAME>=VERSION", "entity:PATH:changes", "date:YYYY-MM-DD", "manual:LABEL"]) {
          expect(err.hint, bad).toContain(form);
        }
      }
    });
  });

  describe("supersede", () => {
    it("without an id links the most recent removal on the path or a dotted child, and inherits its entity_type", async () => {
      const s = await setup("w-sup-auto");
      await log(s.ctx, { entity_path: "users.legacy_id", entity_type: "column", change_type: "add" });
      s.clock.advance(MINUTE);
      const first = await log(s.ctx, { entity_path: "users.legacy_id", entity_type: "column", change_type: "remove" });
      s.clock.advance(MINUTE);
      const latest = await log(s.ctx, { entity_path: "users.legacy_id", entity_type: "column", change_type: "revert" });
      s.clock.advance(MINUTE);
      const sup = await log(s.ctx, { entity_path: "users.legacy_id", change_type: "supersede" });
      expect(sup.supersedes).toBe(latest.id);
      expect(sup.supersedes).not.toBe(first.id);
      const row = (await rowById(sup.id))!;
      expect(row).toMatchObject({ supersedes: latest.id, entity_type: "column", change_type: "supersede" });

      // The superseded event now carries superseded_by; the other removal does not.
      const diff = await ok(s.ctx, "change_diff", { entity_path: "users.legacy_id" });
      const byId = new Map<string, Structured>(diff.items.map((e: Structured) => [e.id, e]));
      expect(byId.get(latest.id)!.superseded_by).toBe(sup.id);
      expect(byId.get(first.id)!.superseded_by).toBe("");
      expect(byId.get(sup.id)!.supersedes).toBe(latest.id);
      expect((await ok(s.ctx, "blame", { entity_path: "users.legacy_id" })).status).toBe("reopened");

      // A supersede on the parent reaches a removal on a dotted child.
      s.clock.advance(MINUTE);
      const child = await log(s.ctx, { entity_path: "orders.coupon", entity_type: "column", change_type: "delete" });
      const parent = await log(s.ctx, { entity_path: "orders", change_type: "supersede" });
      expect(parent.supersedes).toBe(child.id);
      expect((await rowById(parent.id))!.entity_type).toBe("column");
    });

    it("links removals on paths far over 50 bytes (no LIKE pattern limit)", async () => {
      const s = await setup("w-sup-long");
      const long = `${"nested_".repeat(100)}column`;
      const removal = await log(s.ctx, { entity_path: `${long}.child`, change_type: "remove" });
      const sup = await log(s.ctx, { entity_path: long, change_type: "supersede" });
      expect(sup.supersedes).toBe(removal.id);
      const explicit = await log(s.ctx, { entity_path: `${long}.child`, change_type: "supersede", supersedes: removal.id });
      expect(explicit.supersedes).toBe(removal.id);
    });

    it("keeps an explicit entity_type instead of inheriting", async () => {
      const s = await setup("w-sup-type");
      await log(s.ctx, { entity_path: "users.tier", entity_type: "column", change_type: "remove" });
      const sup = await log(s.ctx, { entity_path: "users.tier", entity_type: "config", change_type: "supersede" });
      expect((await rowById(sup.id))!.entity_type).toBe("config");
    });

    it("with an explicit id on the same path links that event; another path's id is supersede_target_not_found", async () => {
      const s = await setup("w-sup-explicit");
      const older = await log(s.ctx, { entity_path: "cache.ttl", change_type: "revert" });
      s.clock.advance(MINUTE);
      await log(s.ctx, { entity_path: "cache.ttl", change_type: "reject", reasoning: "Went with write-through instead of TTLs" });
      const other = await log(s.ctx, { entity_path: "cache.size", change_type: "revert" });
      s.clock.advance(MINUTE);
      const sup = await log(s.ctx, { entity_path: "cache.ttl", change_type: "supersede", supersedes: older.id });
      expect(sup.supersedes).toBe(older.id);
      expect((await ok(s.ctx, "change_diff", { entity_path: "cache.ttl" })).items.find((e: Structured) => e.id === older.id).superseded_by).toBe(sup.id);

      const err = await rejects(s, { entity_path: "cache.ttl", change_type: "supersede", supersedes: other.id, reasoning: WHY }, "supersede_target_not_found");
      expect(err.message).toContain(other.id);
      await rejects(s, { entity_path: "cache.ttl", change_type: "supersede", supersedes: "0190a000-0000-7000-8000-000000000000", reasoning: WHY }, "supersede_target_not_found");

      // Another tenant's event on the same path is not found either.
      const t = await setup("w-sup-explicit-other");
      const foreign = await log(t.ctx, { entity_path: "cache.ttl", change_type: "revert" });
      await rejects(s, { entity_path: "cache.ttl", change_type: "supersede", supersedes: foreign.id, reasoning: WHY }, "supersede_target_not_found");
    });

    it("with no removal on the path is no_removal_to_supersede; supersedes without change_type supersede is invalid_supersedes", async () => {
      const s = await setup("w-sup-none");
      await log(s.ctx, { entity_path: "users.email", change_type: "add" });
      await log(s.ctx, { entity_path: "usersX.email", change_type: "remove" });
      const err = await rejects(s, { entity_path: "users", change_type: "supersede", reasoning: WHY }, "no_removal_to_supersede");
      expect(err.message).toContain("'users'");
      await rejects(s, { entity_path: "nothing.here", change_type: "supersede", reasoning: WHY }, "no_removal_to_supersede");
      const removal = await log(s.ctx, { entity_path: "users.email", change_type: "remove" });
      const bad = await rejects(s, { entity_path: "users.email", change_type: "modify", supersedes: removal.id, reasoning: WHY }, "invalid_supersedes");
      expect(bad.message).toContain("supersede");
    });
  });

  describe("identity and context fields", () => {
    it("keeps the agent name the client gives beside the key's actor, and finds it by search and filter", async () => {
      const s = await setup("w-agent", "ops-key");
      const r = await log(s.ctx, { entity_path: "users.email", change_type: "modify", agent: "claude-code", reasoning: WHY, revisit_after: "1d" });
      expect(r.warnings).toEqual([]);
      const b = await ok(s.ctx, "blame", { entity_path: "users.email" });
      expect(b).toMatchObject({ agent: "claude-code", actor: "ops-key", metadata: {} });
      expect((await rowById(r.id))!).toMatchObject({ agent: "claude-code", actor_id: s.id.actorId });
      const found = await ok(s.ctx, "change_search", { query: "claude-code" });
      expect((found.items as Structured[]).map((e) => e.id)).toEqual([r.id]);

      // Without a name, the agent is the key's actor.
      const own = await log(s.ctx, { entity_path: "users.name", change_type: "modify" });
      expect(await ok(s.ctx, "blame", { entity_path: "users.name" })).toMatchObject({ agent: "ops-key", actor: "ops-key" });
      expect(warned(own, /agent/)).toBe(false);

      // stale_decisions filters by the agent's name; "me" is the key's actor, whatever name it gave.
      s.clock.advance(2 * DAY);
      await ok(s.ctx, "blame", { entity_path: "users.email" });
      const byName = await ok(s.ctx, "stale_decisions", { agent: "claude-code" });
      expect((byName.items as Structured[]).map((e) => e.id)).toEqual([r.id]);
      const mine = await ok(s.ctx, "stale_decisions", { agent: "me" });
      expect((mine.items as Structured[]).map((e) => e.id)).toEqual([r.id]);
      expect((await ok(s.ctx, "stale_decisions", { agent: "ops-key" })).items).toEqual([]);
    });

    it("defaults project to the project the run's repository is mapped to, else the repository's name", async () => {
      const s = await setup("w-project-default");
      const session = await inSession(s.ctx);
      // Outside a run nothing names the project: it stays "" as in the seed without a project root.
      await log(s.ctx, { entity_path: "a.none", change_type: "modify" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.none" })).project).toBe("");

      await ok(s.ctx, "repo_register", { remote_url: "https://github.com/acme/billing-api" });
      await ok(session, "run_heartbeat", { repository_id: "acme/billing-api" });
      await log(session, { entity_path: "a.unmapped", change_type: "modify" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.unmapped" })).project).toBe("billing-api");

      await ok(s.ctx, "project_create", { title: "Billing", key: "BILL" });
      await ok(s.ctx, "repo_link", { project_id: "BILL", repository_id: "acme/billing-api" });
      await log(session, { entity_path: "a.mapped", change_type: "modify" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.mapped" })).project).toBe("BILL");
      // A project the caller names wins.
      await log(session, { entity_path: "a.named", change_type: "modify", project: "web" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.named" })).project).toBe("web");
      const history = await ok(s.ctx, "change_history", { project: "BILL" });
      expect((history.items as Structured[]).map((e) => e.entity_path)).toEqual(["a.mapped"]);
      // A deleted project names nothing: back to the repository's name.
      await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE tenant_id = ? AND key = 'BILL'").bind("2026-01-01T00:00:00.000Z", s.id.tenantId).run();
      await log(session, { entity_path: "a.after_delete", change_type: "modify" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.after_delete" })).project).toBe("billing-api");
    });

    it("stores constraint, returns it on every row and finds it with change_search", async () => {
      const s = await setup("w-constraint");
      const r = await log(s.ctx, { entity_path: "api.rate_limit", change_type: "modify", constraint: "Must stay under 600 requests per minute for the partner tier" });
      expect((await rowById(r.id))!.constraint).toBe("Must stay under 600 requests per minute for the partner tier");
      expect(await ok(s.ctx, "blame", { entity_path: "api.rate_limit" })).toMatchObject({ constraint: "Must stay under 600 requests per minute for the partner tier" });
      const plain = await log(s.ctx, { entity_path: "api.timeout", change_type: "modify" });
      const diff = await ok(s.ctx, "change_diff", { entity_path: "api" });
      expect((diff.items as Structured[]).map((e) => [e.id, e.constraint])).toEqual([
        [plain.id, ""],
        [r.id, "Must stay under 600 requests per minute for the partner tier"],
      ]);
      for (const query of ["partner tier", "600"]) {
        const found = await ok(s.ctx, "change_search", { query });
        expect(
          (found.items as Structured[]).map((e) => e.id),
          query,
        ).toEqual([r.id]);
      }
    });

    it("defaults session_id to the ctx session and keeps an explicit one", async () => {
      const s = await setup("w-session", "claude-code", "mcp-session-42");
      await log(s.ctx, { entity_path: "a.one", change_type: "modify" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.one" })).session_id).toBe("mcp-session-42");
      await log(s.ctx, { entity_path: "a.two", change_type: "modify", session_id: "my-own-session" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.two" })).session_id).toBe("my-own-session");
      const outside = makeCtx(s.id, s.clock, "");
      await log(outside, { entity_path: "a.three", change_type: "modify" });
      expect((await ok(s.ctx, "blame", { entity_path: "a.three" })).session_id).toBe("");
    });

    it("requires git_commit to be hex", async () => {
      const s = await setup("w-git");
      const r = await log(s.ctx, { entity_path: "a.b", change_type: "modify", git_commit: "9fceb02d0ae598e95dc970b74767f19372d61af8" });
      expect((await rowById(r.id))!.git_commit).toBe("9fceb02d0ae598e95dc970b74767f19372d61af8");
      for (const bad of ["not-a-sha", "HEAD", "abc", "9fceb02d0ae598e95dc970b74767f19372d61af8; rm -rf /", "g".repeat(40), "a".repeat(65)]) {
        const err = await rejects(s, { entity_path: "a.b", change_type: "modify", git_commit: bad, reasoning: WHY }, "invalid_input");
        expect(err.message).toContain("git_commit");
      }
    });
  });

  describe("bad input is refused and writes nothing", () => {
    it("missing required fields", async () => {
      const s = await setup("w-bad-missing");
      const noPath = await rejects(s, { change_type: "add", reasoning: WHY }, "invalid_input");
      expect(noPath.message).toContain("entity_path");
      const noType = await rejects(s, { entity_path: "users.email", reasoning: WHY }, "invalid_input");
      expect(noType.message).toContain("change_type");
      await rejects(s, {}, "invalid_input");
      await rejects(s, undefined, "invalid_input");
      await rejects(s, { entity_path: "", change_type: "add" }, "invalid_input");
    });

    it("wrong types and non-object arguments", async () => {
      const s = await setup("w-bad-types");
      const num = await rejects(s, { entity_path: 42, change_type: "add" }, "invalid_input");
      expect(num.message).toContain("entity_path");
      await rejects(s, { entity_path: "a.b", change_type: "add", reasoning: ["why"] }, "invalid_input");
      await rejects(s, { entity_path: "a.b", change_type: "add", diff: { text: "x" } }, "invalid_input");
      await rejects(s, { entity_path: "a.b", change_type: "add", project: null }, "invalid_input");
      await rejects(s, ["a.b", "add"], "invalid_input");
      await rejects(s, "entity_path=a.b", "invalid_input");
      // A read tool's limit as a string is refused too.
      const lim = await fails(s.ctx, "change_diff", { entity_path: "a.b", limit: "10" });
      expect(lim.code).toBe("invalid_input");
      expect(lim.message).toContain("limit");
    });

    it("unknown keys, with the allowed keys in the hint", async () => {
      const s = await setup("w-bad-unknown");
      const err = await rejects(s, { entity_path: "a.b", change_type: "add", reason: "typo'd key", tenant_id: "other" }, "invalid_input");
      expect(err.message).toContain("reason");
      expect(err.message).toContain("tenant_id");
      for (const key of ["entity_path", "change_type", "reasoning", "diff", "rename_from", "revisit_after", "expires_when", "supersedes", "idempotency_key"]) {
        expect(err.hint).toContain(key);
      }
    });

    it("accepts camelCase aliases, refuses both spellings at once", async () => {
      const s = await setup("w-alias");
      const r = await ok(s.ctx, "log_change", {
        entityPath: "users.email",
        changeType: "modify",
        changesetId: "cs-alias",
        entityType: "column",
        reasoning: WHY,
        revisitAfter: "30d",
      });
      const row = (await rowById(r.id))!;
      expect(row).toMatchObject({ entity_path: "users.email", change_type: "modify", changeset_id: "cs-alias", entity_type: "column", revisit_after: "30d" });
      const err = await rejects(s, { entity_path: "users.email", entityPath: "users.email", change_type: "modify" }, "invalid_input");
      expect(err.message).toContain("entity_path");
      expect(err.message).toContain("entityPath");
      // A snake_case-looking key that is not an alias of anything is unknown.
      await rejects(s, { entity_path: "users.email", change_type: "modify", ChangeType: "modify" }, "invalid_input");
    });

    it("oversized fields", async () => {
      const s = await setup("w-bad-size");
      await rejects(s, { entity_path: "p".repeat(1025), change_type: "add" }, "invalid_input");
      await rejects(s, { entity_path: "a.b", change_type: "add", project: "p".repeat(257) }, "invalid_input");
      await rejects(s, { entity_path: "a.b", change_type: "add", rename_from: "r".repeat(1025) }, "invalid_input");
      const max = await log(s.ctx, { entity_path: "p".repeat(1024), change_type: "add" });
      expect((await rowById(max.id))!.entity_path).toHaveLength(1024);
    });

    it("NUL characters anywhere", async () => {
      const s = await setup("w-bad-nul");
      for (const field of ["entity_path", "reasoning", "diff", "project", "changeset_id", "agent", "session_id"]) {
        const err = await rejects(s, { entity_path: "a.b", change_type: "add", reasoning: WHY, [field]: "bad\u0000text" }, "invalid_input");
        expect(err.message, field).toContain("NUL");
        expect(err.message, field).toContain(field);
      }
      await rejects(s, { entity_path: "a.b", change_type: "add\u0000" }, "invalid_input");
      await rejects(s, { entity_path: "a.b", change_type: "add", idempotency_key: "k\u0000" }, "invalid_input");
    });
  });

  describe("hostile strings are stored and read back verbatim", () => {
    it("SQL, LIKE metacharacters, unicode and emoji", async () => {
      const s = await setup("w-hostile");
      const cases = [
        { entity_path: "'); DROP TABLE events;--", reasoning: "Robert'); DROP TABLE events;-- was here\" OR 1=1 --", diff: "x' OR '1'='1" },
        { entity_path: "promo.50%_off", reasoning: "LIKE metacharacters %_\\ and \\% \\_ stay literal", diff: "%%__\\\\" },
        { entity_path: "données/résumé.txt", reasoning: "Ünïcödé reasoning — with em dash, 日本語 and Ελληνικά", diff: "é\u0301 combining" },
        { entity_path: "🚀.launch_flag", reasoning: "Emoji 🎉👩‍👩‍👧 and a surrogate-heavy line 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", diff: "\t\r\n  whitespace kept  \n" },
      ];
      for (const c of cases) {
        const r = await ok(s.ctx, "log_change", { ...c, change_type: "modify", project: c.entity_path, changeset_id: `${c.entity_path}-cs` });
        const b = await ok(s.ctx, "blame", { entity_path: c.entity_path });
        expect(b.id).toBe(r.id);
        expect(b.entity_path).toBe(c.entity_path);
        expect(b.reasoning).toBe(c.reasoning);
        expect(b.diff).toBe(c.diff);
        expect(b.project).toBe(c.entity_path);
        expect(b.changeset_id).toBe(`${c.entity_path}-cs`);
      }
      // The events table survived, and holds exactly these rows.
      expect(await s.events()).toBe(cases.length);
      const hits = await ok(s.ctx, "change_search", { query: "DROP TABLE" });
      expect(hits.items).toHaveLength(1);
    });
  });

  describe("idempotency_key", () => {
    it("replays the first result without writing, for the same arguments (aliases included)", async () => {
      const s = await setup("w-idem");
      const args = { entity_path: "users.email", change_type: "modify", reasoning: WHY, idempotency_key: "k-1" };
      const first = await ok(s.ctx, "log_change", args);
      expect(first).not.toHaveProperty("idempotent_replay");
      s.clock.advance(MINUTE);
      const again = await ok(s.ctx, "log_change", args);
      expect(again.idempotent_replay).toBe(true);
      const { idempotent_replay: _r, ...rest } = again;
      const { idempotent_replay: _f, ...firstRest } = first;
      expect(rest).toEqual(firstRest);
      expect(await s.events()).toBe(1);
      const aliased = await ok(s.ctx, "log_change", { entityPath: "users.email", changeType: "modify", reasoning: WHY, idempotencyKey: "k-1" });
      expect(aliased.idempotent_replay).toBe(true);
      expect(aliased.id).toBe(first.id);
      expect(await s.events()).toBe(1);
    });

    it("refuses the same key with different arguments", async () => {
      const s = await setup("w-idem-reuse");
      await ok(s.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: WHY, idempotency_key: "k-2" });
      const err = await rejects(s, { entity_path: "users.email", change_type: "remove", reasoning: WHY, idempotency_key: "k-2" }, "idempotency_key_reused");
      expect(err.retryable).toBe(false);
      expect(await s.events()).toBe(1);
    });

    it("scopes keys per actor", async () => {
      const a = await setup("w-idem-actors", "agent-a");
      const bId = await seedIdentity("w-idem-actors", "agent-b");
      const b = makeCtx(bId, a.clock, "");
      const args = { entity_path: "users.email", change_type: "modify", reasoning: WHY, idempotency_key: "shared-key" };
      const ra = await ok(a.ctx, "log_change", args);
      const rb = await ok(b, "log_change", args);
      expect(rb).not.toHaveProperty("idempotent_replay");
      expect(rb.id).not.toBe(ra.id);
      expect(await a.events()).toBe(2);
      const agents = (await rowsOf(a.id.tenantId)).map((r) => r.agent).sort();
      expect(agents).toEqual(["agent-a", "agent-b"]);
    });

    it("forgets a key after its 24h lifetime", async () => {
      const s = await setup("w-idem-ttl");
      const args = { entity_path: "users.email", change_type: "modify", reasoning: WHY, idempotency_key: "k-ttl" };
      const first = await ok(s.ctx, "log_change", args);
      s.clock.advance(23 * 60 * MINUTE);
      expect((await ok(s.ctx, "log_change", args)).id).toBe(first.id);
      s.clock.advance(2 * 60 * MINUTE);
      const later = await ok(s.ctx, "log_change", args);
      expect(later).not.toHaveProperty("idempotent_replay");
      expect(later.id).not.toBe(first.id);
      expect(await s.events()).toBe(2);
    });

    it("answers idempotency_in_progress while the same call is running, and takes over an abandoned one", async () => {
      const s = await setup("w-idem-pending");
      const args = { entity_path: "users.email", change_type: "modify", reasoning: WHY, idempotency_key: "k-pending" };
      const hash = await sha256Hex(stableStringify(args));
      const now = s.clock.now();
      await env.DB.prepare(
        `INSERT INTO idempotency_keys (tenant_id, actor_id, tool, key, request_hash, status, result, created_at, expires_at)
       VALUES (?, ?, 'log_change', 'k-pending', ?, 'pending', NULL, ?, ?)`,
      )
        .bind(s.id.tenantId, s.id.actorId, hash, now.toISOString(), new Date(now.getTime() + DAY).toISOString())
        .run();
      const err = await rejects(s, args, "idempotency_in_progress");
      expect(err.retryable).toBe(true);
      s.clock.advance(3 * MINUTE);
      const r = await ok(s.ctx, "log_change", args);
      expect(r).not.toHaveProperty("idempotent_replay");
      expect(await s.events()).toBe(1);
    });

    it("a failed call does not burn the key", async () => {
      const s = await setup("w-idem-fail");
      // Refused by schema validation.
      await rejects(s, { entity_path: "users.email", change_type: "modfy", reasoning: WHY, idempotency_key: "k-3" }, "invalid_input");
      const fixed = await ok(s.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: WHY, idempotency_key: "k-3" });
      expect(fixed).not.toHaveProperty("idempotent_replay");
      expect(await s.events()).toBe(1);
      // Refused by the service after the key was reserved.
      await rejects(s, { entity_path: "users.email", change_type: "modify", reasoning: WHY, revisit_after: "someday", idempotency_key: "k-4" }, "invalid_revisit_after");
      const retry = await ok(s.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: WHY, revisit_after: "30d", idempotency_key: "k-4" });
      expect(retry).not.toHaveProperty("idempotent_replay");
      expect(await s.events()).toBe(2);
    });
  });
});
