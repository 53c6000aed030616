/** git_status's includeSubmodules (seed 002) over the GitHub API: gitlinks followed with the caller's own credentials. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseGitmodules, submoduleTarget } from "../../src/git/submodules";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { errorBody, example, FakeGitHub, type FakeRequest } from "../support/github/fake";
import { connectGitHub } from "../support/github/tenant";
import { fails, newWorld, ok } from "../support/helpers";

afterEach(() => vi.restoreAllMocks());

const SHA_A = "a".repeat(40);
const SHA_B = "b".repeat(40);
const SHA_C = "c".repeat(40);
const SHA_D = "d".repeat(40);
const CONTENTS = "GET /repos/{owner}/{repo}/contents/{path}";
const REPO = "GET /repos/{owner}/{repo}";
const COMPARE = "GET /repos/{owner}/{repo}/compare/{basehead}";

const GITMODULES = [
  '[submodule "lib/reachable"]',
  "\tpath = lib/reachable",
  "\turl = https://api.github.test/acme/lib.git ; the shared library",
  '[submodule "vendor/private"]',
  "\tpath = vendor/private",
  "\turl = ../private-thing.git",
  "\tbranch = stable",
  "# not on the configured GitHub",
  '[submodule "gl"]',
  "\tpath = third_party/gl",
  '\turl = "https://gitlab.com/x/y.git"',
  "",
].join("\n");

/** The contents API's answer for a file (base64, as GitHub sends it). */
const fileBody = (path: string, text: string) => example(CONTENTS, { type: "file", encoding: "base64", path, name: path.split("/").pop(), size: text.length, content: btoa(text), sha: SHA_D });

/** The contents API's answer at a gitlink: type submodule, the pinned commit as its sha. */
function gitlinkBody(path: string, sha: string, url: string) {
  const { content: _c, encoding: _e, ...rest } = example<Record<string, unknown>>(CONTENTS);
  return { ...rest, type: "submodule", path, name: path.split("/").pop(), sha, size: 0, submodule_git_url: url };
}

/** A superproject whose head (SHA_A on main) pins the submodules `gitmodules` lists, at `pins`. */
function superproject(gh: FakeGitHub, gitmodules: string, pins: Record<string, string>, repos: Record<string, { status: number } | { default_branch: string }>) {
  return gh
    .on(REPO, (req) => {
      const found = repos[`${req.path.owner}/${req.path.repo}`] ?? { default_branch: "main" };
      return "status" in found
        ? { status: found.status, body: errorBody("Not Found") }
        : { body: example(REPO, { default_branch: found.default_branch, language: "TypeScript", source: { language: "TypeScript" } }) };
    })
    .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({
      body: example("GET /repos/{owner}/{repo}/branches/{branch}", {
        name: req.path.branch,
        commit: { sha: SHA_A },
        protected: false,
        _links: { html: `https://github.com/x/tree/${req.path.branch}` },
      }),
    }))
    .on("GET /repos/{owner}/{repo}/pulls", () => ({ body: [] }))
    .on("GET /repos/{owner}/{repo}/commits/{ref}/status", () => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}/status", { total_count: 0, statuses: [] }) }))
    .on("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", () => ({ body: { total_count: 0, check_runs: [] } }))
    .on(CONTENTS, (req) => {
      if (req.path.path === ".gitmodules") return { body: fileBody(".gitmodules", gitmodules) };
      const pin = pins[req.path.path!];
      return pin ? { body: gitlinkBody(req.path.path!, pin, "https://example.invalid/x.git") } : { status: 404, body: errorBody("Not Found") };
    })
    .on(COMPARE, (req) => ({ body: example(COMPARE, { ahead_by: 0, behind_by: req.path.repo === "lib" ? 3 : 1, files: [] }) }));
}

async function setup(prefix = "gitsub", token?: string) {
  const w = await newWorld(prefix, { start: "2026-06-01T12:00:00.000Z" });
  const gh = new FakeGitHub();
  const ctx = await connectGitHub(w.ctx, gh, token);
  return { w, gh, ctx };
}

async function text(ctx: Ctx, args: Record<string, unknown>): Promise<string> {
  const result = await callTool(findTool("git_status")!, ctx, args);
  return (result.content[0] as { text: string }).text;
}

const THREE = { "lib/reachable": SHA_B, "vendor/private": SHA_C, "third_party/gl": SHA_D };

describe("git_status", () => {
  describe("includeSubmodules", () => {
    it("follows gitlinks by default (the seed's includeSubmodules: true): the pinned commit against the branch it tracks, and a reason where it cannot be followed", async () => {
      const { gh, ctx } = await setup();
      superproject(gh, GITMODULES, THREE, { "octocat/private-thing": { status: 404 } });
      const r = await ok(ctx, "git_status", { repo: "octocat/Hello-World" });
      const [top, reachable, hidden, elsewhere] = r.groups[0].repos;
      expect(top).toMatchObject({ label: "octocat/Hello-World", ok: true, statusText: "## main" });
      expect(top.submodule).toBeUndefined();
      expect(reachable).toEqual({
        label: "lib/reachable",
        path: `https://api.github.test/acme/lib/tree/${SHA_B}`,
        ok: true,
        statusText: "## HEAD (pinned bbbbbbb)...main [behind 3]",
        base: "main",
        headSha: SHA_B,
        headAbbrev: "bbbbbbb",
        ahead: 0,
        behind: 3,
        submodule: { name: "lib/reachable", url: "https://api.github.test/acme/lib.git", repository: "acme/lib" },
      });
      // A relative url is resolved against the superproject; its repository is not visible to the tenant.
      expect(hidden).toMatchObject({ label: "vendor/private", headSha: SHA_C, error: "submodule_unreachable", submodule: { url: "../private-thing.git", repository: "octocat/private-thing" } });
      expect(hidden.statusText).toBe("(pinned ccccccc; octocat/private-thing not found, or not visible to the tenant's GitHub credentials)");
      expect(hidden.ok).toBeUndefined();
      expect(elsewhere).toMatchObject({ label: "third_party/gl", headSha: SHA_D, error: "submodule_not_on_github", statusText: expect.stringContaining("gitlab.com") });
      expect(r.groups[0].submodulesTruncated).toBeUndefined();
      // Everything read at the branch head, each submodule's gitlink once; nothing asked of another host.
      const contents = gh.requests.filter((q) => q.op === CONTENTS);
      // (Submodules are read 4 at a time, so in no fixed order.)
      expect(contents.map((q) => `${q.path.path}@${q.query.ref}`).sort()).toEqual([`.gitmodules@${SHA_A}`, `lib/reachable@${SHA_A}`, `third_party/gl@${SHA_A}`, `vendor/private@${SHA_A}`]);
      expect(gh.requests.find((q) => q.op === COMPARE && q.path.repo === "lib")!.path.basehead).toBe(`main...${SHA_B}`);
      expect(gh.requests.some((q) => q.op === COMPARE && q.path.repo === "private-thing")).toBe(false);

      const md = await text(ctx, { repo: "octocat/Hello-World" });
      expect(md).toContain("Submodule lib/reachable (acme/lib)\n```\n## HEAD (pinned bbbbbbb)...main [behind 3]\n```");
      expect(md).toContain("Submodule vendor/private (octocat/private-thing)\n```\n(pinned ccccccc; octocat/private-thing not found");
    });

    it("a submodule that cannot be read is a row with its reason, the call still answering: no gitlink, a path escaping the repository, an unreadable .gitmodules", async () => {
      const { gh, ctx } = await setup();
      const gitmodules =
        '[submodule "gone"]\n\tpath = gone\n\turl = https://api.github.test/acme/lib\n[submodule "evil"]\n\tpath = ../../etc\n\turl = https://api.github.test/acme/lib\n[submodule "nopath"]\n\turl = https://api.github.test/acme/x\n[submodule "nourl"]\n\tpath = bare\n';
      superproject(gh, gitmodules, { bare: SHA_B }, {});
      const rows = (await ok(ctx, "git_status", { repo: "octocat/Hello-World" })).groups[0].repos;
      expect(rows.map((row: { label: string; error?: string }) => [row.label, row.error])).toEqual([
        ["octocat/Hello-World", undefined],
        ["gone", "submodule_not_pinned"],
        ["../../etc", "submodule_path_rejected"],
        ["bare", "submodule_url_unrecognized"],
      ]);
      expect(rows[2].statusText).toBe("(submodule path escapes repository — rejected)");
      expect(rows[3]).toMatchObject({ headSha: SHA_B, submodule: { name: "nourl" }, statusText: "(pinned bbbbbbb; .gitmodules gives no url — not followed)" });
      expect(
        gh.requests
          .filter((q) => q.op === CONTENTS)
          .map((q) => q.path.path)
          .sort(),
      ).toEqual([".gitmodules", "bare", "gone"]);

      // .gitmodules that is not a file: a note on the group, the branch's own row intact.
      gh.on(CONTENTS, () => ({ body: [] }));
      const g = (await ok(ctx, "git_status", { repo: "octocat/Hello-World" })).groups[0];
      expect(g.repos).toHaveLength(1);
      expect(g.submodulesNote).toBe("(.gitmodules is not a file — submodules not read)");
    });

    it("include_submodules: false (or includeSubmodules) skips them without reading .gitmodules; a bad value is refused before any request", async () => {
      const { gh, ctx } = await setup();
      superproject(gh, GITMODULES, THREE, {});
      for (const args of [{ include_submodules: false }, { includeSubmodules: false }]) {
        const before = gh.requests.length;
        const r = await ok(ctx, "git_status", { repo: "octocat/Hello-World", ...args });
        expect(r.groups[0].repos).toHaveLength(1);
        expect(gh.requests.slice(before).some((q) => q.op === CONTENTS)).toBe(false);
      }
      for (const args of [{ include_submodules: "yes" }, { includeSubmodules: 1 }, { include_submodules: true, includeSubmodules: true }]) {
        const before = gh.requests.length;
        const err = await fails(ctx, "git_status", { repo: "octocat/Hello-World", ...args });
        expect(err.code, JSON.stringify(args)).toBe("invalid_input");
        expect(err.hint.length).toBeGreaterThan(0);
        expect(gh.requests.length).toBe(before);
      }
    });

    it("follows at most 64 submodules per call, in repository order, and says how many were left out", async () => {
      const { gh, ctx } = await setup();
      const many = Array.from({ length: 40 }, (_, i) => `[submodule "s${i}"]\n\tpath = s/${i}\n\turl = https://api.github.test/acme/lib.git\n`).join("");
      superproject(gh, many, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s/${i}`, SHA_B])), {});
      const r = await ok(ctx, "git_status", { repos: ["octocat/one", "octocat/two"], format: "json" });
      const [one, two] = r.groups;
      expect(one.repos).toHaveLength(41);
      // The seed's omission rule: no truncation fields where nothing was left out.
      expect(Object.keys(one)).toEqual(["workspace_root", "repos"]);
      expect(two.repos).toHaveLength(25);
      expect(two.repos.at(-1).label).toBe("s/23");
      expect(two).toMatchObject({ submodulesTruncated: true, submodulesOmittedCount: 16 });
      // One repository behind all 64 submodules: read once for the call.
      expect(gh.requests.filter((q) => q.op === REPO && q.path.repo === "lib")).toHaveLength(1);
      expect(await text(ctx, { repos: ["octocat/one", "octocat/two"] })).toContain("16 more submodule(s) not followed (at most 64 per call).");
    });

    it("reads submodules with the caller's own credentials only: another tenant's token and registered repositories are never used", async () => {
      const a = await setup("gitsub-a", "ghp_tenant_a");
      const b = await setup("gitsub-b", "ghp_tenant_b");
      // Tenant B can see acme/secret and has registered it under a slug; tenant A cannot see it.
      await ok(b.ctx, "repo_register", { remote_url: "https://api.github.test/acme/secret" });
      const gh = a.gh;
      const seen: FakeRequest[] = [];
      superproject(gh, '[submodule "s"]\n\tpath = s\n\turl = https://api.github.test/acme/secret.git\n[submodule "slug"]\n\tpath = t\n\turl = secret\n', { s: SHA_B, t: SHA_C }, {});
      gh.on(REPO, (req) => {
        seen.push(req);
        const visible = req.path.repo !== "secret" || req.headers.get("authorization") === "Bearer ghp_tenant_b";
        return visible ? { body: example(REPO, { default_branch: "main", language: "TypeScript", source: { language: "TypeScript" } }) } : { status: 404, body: errorBody("Not Found") };
      });
      // b's spy was installed last; a's calls go to a's fake with a's stored token.
      vi.spyOn(globalThis, "fetch").mockImplementation(gh.fetch);
      const rows = (await ok(a.ctx, "git_status", { repo: "octocat/Hello-World" })).groups[0].repos;
      expect(rows[1]).toMatchObject({ label: "s", error: "submodule_unreachable", submodule: { repository: "acme/secret" } });
      // A bare word is not a repository address: not looked up among anyone's registered repositories.
      expect(rows[2]).toMatchObject({ label: "t", error: "submodule_url_unrecognized" });
      expect(seen.some((q) => q.path.repo === "secret")).toBe(true);
      expect(gh.requests.every((q) => q.headers.get("authorization") === "Bearer ghp_tenant_a")).toBe(true);
    });
  });
});

describe(".gitmodules and submodule URLs", () => {
  it("reads git-config syntax: quoted values, comments, escapes, repeated sections", () => {
    const text =
      '# top\n[core]\n\tpath = not/a/submodule\n[submodule "a b"]\n\tPath = "dir/with space" # trailing\n\turl = git@github.com:o/r.git\n[submodule "a b"]\n\tbranch = dev\n[submodule "x"]\n\turl = https://github.com/o/x\n';
    expect(parseGitmodules(text)).toEqual([{ name: "a b", path: "dir/with space", url: "git@github.com:o/r.git", branch: "dev" }]);
  });

  it("maps https, ssh, scp-like and relative URLs onto the configured GitHub, and nothing else", () => {
    const sup = { owner: "octocat", name: "Hello-World" };
    const target = (url: string) => submoduleTarget(url, sup, "github.com");
    for (const url of ["https://github.com/o/r.git", "http://github.com/o/r", "ssh://git@github.com/o/r.git", "git@github.com:o/r.git", "git://github.com/o/r.git", "https://GitHub.com/o/r/"]) {
      expect(target(url), url).toEqual({ repo: { owner: "o", name: "r" } });
    }
    expect(target("../r.git")).toEqual({ repo: { owner: "octocat", name: "r" } });
    expect(target("../../o/r")).toEqual({ repo: { owner: "o", name: "r" } });
    expect(target("./sub")).toMatchObject({ code: "submodule_url_unrecognized" });
    expect(target("https://gitlab.com/o/r.git")).toMatchObject({ code: "submodule_not_on_github" });
    expect(target("https://github.com/o/r/extra")).toMatchObject({ code: "submodule_url_unrecognized" });
    expect(target("file:///srv/r.git")).toMatchObject({ code: "submodule_url_unrecognized" });
    expect(target("/srv/r.git")).toMatchObject({ code: "submodule_url_unrecognized" });
    expect(target("https://github.com/o/%E0%A4%A")).toMatchObject({ code: "submodule_url_unrecognized" });
  });
});
