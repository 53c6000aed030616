/** review_settings: one repository's review settings, read and changed, per tenant; the default lists as data. */
import { env } from "cloudflare:workers";
import picomatch from "picomatch";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Ctx } from "../../src/core/context";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { pathRules } from "../../src/review/pipeline/preflight";
import { DEFAULT_CONFIG_PATHS, DEFAULT_HOTSPOTS, globProblem, reviewSettingsFor, SETTINGS_GLOB_OPTIONS } from "../../src/review/settings/model";
import { errorBody, example, FakeGitHub } from "../support/github/fake";
import { connectGitHub } from "../support/github/tenant";
import { fails, MINUTE, newWorld, ok, refusedWithoutWrites } from "../support/helpers";

afterEach(() => vi.restoreAllMocks());

const REPO = "GET /repos/{owner}/{repo}";

const stored = (ctx: Ctx, repo: string) => async () => env.DB.prepare(`SELECT * FROM review_settings WHERE tenant_id = ? AND repo = ?`).bind(ctx.tenantId, repo).first();

describe("review_settings", () => {
  describe("review_settings: read", () => {
    it("answers the defaults, written out, for a repository never set, and writes nothing", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const r = await ok(w.ctx, "review_settings", { repo: "honojs/hono" });
      expect(r).toMatchObject({
        repo: "honojs/hono",
        changed: false,
        settings: { hotspots: null, config_paths: null, invariants_path: ".review-invariants.yml", reactive: false, publish: false, updated_at: null, updated_by: null },
        effective: { hotspots_default: true, config_paths_default: true, config_paths: [...DEFAULT_CONFIG_PATHS] },
      });
      expect(r.effective.hotspots.map((h: { id: string }) => h.id)).toEqual(["src/mcp", "src/reactive", "src/internal", "src/http", "auth", "security"]);
      expect(r.effective.hotspots[4]).toEqual({ id: "auth", paths: DEFAULT_HOTSPOTS[4]!.paths, description: "a path segment named auth, oauth, jwt or token" });
      expect(await stored(w.ctx, "honojs/hono")()).toBeNull();
    });
  });

  describe("review_settings: update and reset", () => {
    it("stores what is given, keeps what is not, and resets lists with null", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const hotspots = [
        { id: "jsx", paths: ["src/jsx/**"] },
        { id: "adapters", paths: ["src/adapter/*/index.ts", "runtime-tests/**"] },
      ];
      const r = await ok(w.ctx, "review_settings", { repo: "HonoJS/Hono", hotspots, config_paths: ["jsr.json", "**/*.toml"], invariants_path: "./.github/review-invariants.yml", reactive: true });
      expect(r.changed).toBe(true);
      expect(r.repo).toBe("HonoJS/Hono");
      expect(r.settings).toEqual({
        hotspots,
        config_paths: ["jsr.json", "**/*.toml"],
        invariants_path: ".github/review-invariants.yml",
        reactive: true,
        publish: false,
        pr_story: false,
        updated_at: "2026-06-01T12:00:00.000Z",
        updated_by: w.id.actorName,
      });
      expect(r.effective).toEqual({ hotspots, config_paths: ["jsr.json", "**/*.toml"], hotspots_default: false, config_paths_default: false });
      // Stored under the lowercased key the review paths read.
      expect((await reviewSettingsFor(w.ctx, "honojs/hono")).reactive).toBe(true);

      w.clock.advance(5 * MINUTE);
      const partial = await ok(w.ctx, "review_settings", { repo: "honojs/hono", reactive: false });
      expect(partial.settings).toMatchObject({ hotspots, invariants_path: ".github/review-invariants.yml", reactive: false, updated_at: "2026-06-01T12:05:00.000Z" });

      const reset = await ok(w.ctx, "review_settings", { repo: "honojs/hono", hotspots: null, config_paths: null, invariants_path: null });
      expect(reset.settings).toMatchObject({ hotspots: null, config_paths: null, invariants_path: ".review-invariants.yml", reactive: false });
      expect(reset.effective.hotspots_default).toBe(true);
      expect(reset.effective.config_paths).toEqual([...DEFAULT_CONFIG_PATHS]);
    });

    it("changes nothing, not even updated_at, when the values are already so", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      await ok(w.ctx, "review_settings", { repo: "honojs/hono", config_paths: ["deno.json"] });
      // Past the retry window, so the identical call is a new one rather than a replay of the first.
      w.clock.advance(DERIVED_WINDOW_MS);
      const again = await ok(w.ctx, "review_settings", { repo: "honojs/hono", config_paths: ["deno.json"] });
      expect(again.idempotent_replay).toBeUndefined();
      expect(again.changed).toBe(false);
      expect(again.settings.updated_at).toBe("2026-06-01T12:00:00.000Z");
      // Setting defaults on a repository never set writes no row either.
      expect((await ok(w.ctx, "review_settings", { repo: "honojs/other", reactive: false, hotspots: null })).changed).toBe(false);
      expect(await stored(w.ctx, "honojs/other")()).toBeNull();
    });

    it("replays a write retried with the same idempotency_key", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const first = await ok(w.ctx, "review_settings", { repo: "honojs/hono", reactive: true, idempotency_key: "rv-1" });
      const replay = await ok(w.ctx, "review_settings", { repo: "honojs/hono", reactive: true, idempotency_key: "rv-1" });
      expect(replay.idempotent_replay).toBe(true);
      expect(replay.settings).toEqual(first.settings);
    });
  });

  describe("review_settings: validation", () => {
    const bad: [string, Record<string, unknown>][] = [
      ["an unbalanced bracket", { config_paths: ["src/[ab.ts"] }],
      ["an unbalanced brace", { hotspots: [{ id: "x", paths: ["src/{a,b/**"] }] }],
      ["an absolute glob", { config_paths: ["/etc/**"] }],
      ["a drive path", { config_paths: ["C:/x/**"] }],
      ["a .. segment", { hotspots: [{ id: "x", paths: ["../other/**"] }] }],
      ["a backslash", { config_paths: ["src\\*.ts"] }],
      ["surrounding spaces", { config_paths: [" src/** "] }],
      [
        "duplicate hotspot ids",
        {
          hotspots: [
            { id: "Auth", paths: ["a/**"] },
            { id: "auth", paths: ["b/**"] },
          ],
        },
      ],
      ["too many hotspot rules", { hotspots: Array.from({ length: 31 }, (_, i) => ({ id: `h${i}`, paths: ["x/**"] })) }],
      ["too many globs in a rule", { hotspots: [{ id: "x", paths: Array.from({ length: 21 }, (_, i) => `p${i}/**`) }] }],
      ["a rule without globs", { hotspots: [{ id: "x", paths: [] }] }],
      ["an empty id", { hotspots: [{ id: "  ", paths: ["x/**"] }] }],
      ["too many config paths", { config_paths: Array.from({ length: 51 }, (_, i) => `c${i}.json`) }],
      ["a too long glob", { config_paths: ["a".repeat(201)] }],
      ["an invariants_path outside the repository", { invariants_path: "../rules.yml" }],
      ["an absolute invariants_path", { invariants_path: "/rules.yml" }],
      ["a non-boolean reactive", { reactive: "yes" }],
      ["an unknown key", { hotspot: [] }],
    ];
    it.each(bad)("refuses %s and changes nothing", async (_what, args) => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      await ok(w.ctx, "review_settings", { repo: "honojs/hono", reactive: true, config_paths: ["deno.json"] });
      await refusedWithoutWrites(w.ctx, "review_settings", { repo: "honojs/hono", ...args }, "invalid_input", stored(w.ctx, "honojs/hono"));
    });

    it("says which glob is wrong and why", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const err = await fails(w.ctx, "review_settings", {
        repo: "honojs/hono",
        hotspots: [
          { id: "ok", paths: ["a/**"] },
          { id: "bad", paths: ["b/**", "src/(x"] },
        ],
      });
      expect(err.message).toMatch(/^hotspots\[1\]\.paths\[1\] 'src\/\(x' is not a valid glob/);
      expect(globProblem("src/**/*.{ts,tsx}")).toBeNull();
    });

    it("needs a repository that resolves", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      expect((await fails(w.ctx, "review_settings", { repo: "no-slash" })).code).toBe("invalid_repo");
    });
  });

  describe("review_settings: publish", () => {
    it("refuses to turn publish on without GitHub credentials, and writes nothing", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const err = await refusedWithoutWrites(w.ctx, "review_settings", { repo: "honojs/hono", publish: true, reactive: true }, "github_not_configured", stored(w.ctx, "honojs/hono"));
      expect(err.hint).toMatch(/set-token/);
      // Turning it off needs nothing.
      expect((await ok(w.ctx, "review_settings", { repo: "honojs/hono", publish: false, reactive: true })).settings.publish).toBe(false);
    });

    it("turns publish on when the credentials can see the repository", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const gh = new FakeGitHub();
      const ctx = await connectGitHub(w.ctx, gh);
      gh.on(REPO, () => ({ body: example(REPO, { language: "TypeScript", source: { language: "TypeScript" } }) }));
      const r = await ok(ctx, "review_settings", { repo: "honojs/hono", publish: true });
      expect(r.settings.publish).toBe(true);
      expect(gh.requests.map((q) => [q.op, q.path.owner, q.path.repo])).toEqual([[REPO, "honojs", "hono"]]);
      // Already on: no second check.
      await ok(ctx, "review_settings", { repo: "honojs/hono", publish: true, reactive: true });
      expect(gh.count(REPO)).toBe(1);
    });

    it("refuses publish for a repository the credentials cannot see", async () => {
      const w = await newWorld("rvset", { start: "2026-06-01T12:00:00.000Z" });
      const gh = new FakeGitHub();
      const ctx = await connectGitHub(w.ctx, gh);
      gh.on(REPO, () => ({ status: 404, body: errorBody("Not Found") }));
      await refusedWithoutWrites(ctx, "review_settings", { repo: "honojs/secret", publish: true }, "repo_not_found", stored(ctx, "honojs/secret"));
    });
  });

  describe("review_settings: tenants", () => {
    it("keeps each tenant's settings of the same repository apart", async () => {
      const a = await newWorld("rvset-a", { start: "2026-06-01T12:00:00.000Z" });
      const b = await newWorld("rvset-b", { start: "2026-06-01T12:00:00.000Z" });
      await ok(a.ctx, "review_settings", { repo: "honojs/hono", reactive: true, hotspots: [{ id: "jsx", paths: ["src/jsx/**"] }] });
      const seenByB = await ok(b.ctx, "review_settings", { repo: "honojs/hono" });
      expect(seenByB.settings).toMatchObject({ reactive: false, hotspots: null, updated_by: null });
      await ok(b.ctx, "review_settings", { repo: "honojs/hono", config_paths: ["b.json"] });
      const seenByA = await ok(a.ctx, "review_settings", { repo: "honojs/hono" });
      expect(seenByA.settings).toMatchObject({ reactive: true, config_paths: null, hotspots: [{ id: "jsx", paths: ["src/jsx/**"] }] });
    });
  });

  describe("the default lists", () => {
    // The reference's rules (shared/reference/seed-behaviour.md §5.3, case-insensitive), against which the globs are checked.
    const CONFIG: RegExp[] = [/^package\.json$/i, /^package-lock\.json$/i, /^tsconfig(\..+)?\.json$/i, /^\.github\//i, /^dockerfile$/i, /^docker\//i, /^scripts\//i, /\.ya?ml$/i];
    const HOT: Record<string, RegExp> = {
      "src/mcp": /^src\/mcp\//i,
      "src/reactive": /^src\/reactive\//i,
      "src/internal": /^src\/internal\//i,
      "src/http": /^src\/http\//i,
      auth: /(^|\/)(auth|oauth|jwt|token)(\/|$)/i,
      security: /(^|\/)(security|crypto|tls|ssl)(\/|$)/i,
    };
    const PATHS = [
      "package.json",
      "Package.JSON",
      "web/package.json",
      "package-lock.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "tsconfig.test.json",
      "tsconfigx.json",
      ".github/workflows/ci.yml",
      ".github/CODEOWNERS",
      "Dockerfile",
      "docker/compose.yaml",
      "app/Dockerfile",
      "scripts/release.sh",
      "src/scripts/x.ts",
      "wrangler.yaml",
      "a/b/c.YML",
      "notyaml.ymlx",
      "src/mcp/server.ts",
      "src/mcp",
      "SRC/MCP/tools/x.ts",
      "src/reactive/a.ts",
      "src/internal/b.ts",
      "src/http/c.ts",
      "lib/src/http/c.ts",
      "src/auth/login.ts",
      "auth",
      "packages/oauth/index.ts",
      "src/jwt.ts",
      "src/token/refresh.ts",
      "tokens/x.ts",
      "src/Security/audit.ts",
      "lib/crypto/x.ts",
      "tls/cert.pem",
      "src/ssl",
      "src/sslx/a.ts",
      "README.md",
      ".github",
      "docker",
      "scripts",
      "src/http",
    ];
    const matches = (globs: readonly string[], path: string) => globs.some((g) => picomatch(g, SETTINGS_GLOB_OPTIONS)(path));

    it("the config path globs match exactly what the reference's patterns match", () => {
      for (const p of PATHS) expect(matches(DEFAULT_CONFIG_PATHS, p), p).toBe(CONFIG.some((r) => r.test(p)));
    });

    it("the hotspot globs match exactly what the reference's patterns match", () => {
      for (const h of DEFAULT_HOTSPOTS) {
        for (const p of PATHS) expect(matches(h.paths, p), `${h.id} ${p}`).toBe(HOT[h.id]!.test(p));
      }
    });

    it("are what review_diff's preflight matches without settings, path for path as the reference", () => {
      const rules = pathRules(null);
      for (const p of PATHS) {
        expect(rules.isConfig(p), p).toBe(CONFIG.some((r) => r.test(p)));
        expect(rules.hotspotsOf(p), p).toEqual(Object.keys(HOT).filter((id) => HOT[id]!.test(p)));
      }
    });

    it("are valid settings globs themselves", () => {
      for (const g of [...DEFAULT_CONFIG_PATHS, ...DEFAULT_HOTSPOTS.flatMap((h) => h.paths)]) expect(globProblem(g), g).toBeNull();
    });
  });
});
