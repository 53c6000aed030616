/** change_import_git: a registered repository's commits, one change event per file, at the commit's date, through the fake GitHub. */
import examples from "@octokit/webhooks-examples/api.github.com/index.json";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Ctx } from "../../../src/core/context";
import { errorBody, example, exampleItem, FakeGitHub } from "../../support/github/fake";
import { connectGitHub } from "../../support/github/tenant";
import { call, count, fails, newWorld, ok, refusedWithoutWrites, type Structured, type World } from "../../support/helpers";

afterEach(() => vi.restoreAllMocks());

/** A push event's commit, as GitHub's webhook examples carry it. */
interface PushCommit {
  id: string;
  message: string;
  timestamp: string;
  author: { name: string; username: string };
  added: string[];
  modified: string[];
  removed: string[];
}

const START = "2026-06-01T12:00:00.000Z";

interface FakeCommit {
  sha: string;
  date: string;
  message: string;
  login?: string;
  name: string;
  files: Array<{ filename: string; status: string; previous_filename?: string }>;
  /** GitHub says more files follow on another page. */
  more?: boolean;
}

const sha = (n: number) => String(n).repeat(40);

/** Newest first, as GitHub lists them: a rename and a removal in the newest. */
function history(): FakeCommit[] {
  return [
    {
      sha: sha(4),
      date: "2024-04-04T10:00:00Z",
      message: "Move the helper next to its callers\n\nThe docs page is obsolete.",
      login: "mona",
      name: "Mona Lisa",
      files: [
        { filename: "src/new.ts", status: "renamed", previous_filename: "src/old.ts" },
        { filename: "docs/a.md", status: "removed" },
      ],
    },
    { sha: sha(3), date: "2024-04-03T10:00:00Z", message: "Handle empty input in the helper", name: "Hubot", files: [{ filename: "src/old.ts", status: "modified" }] },
    { sha: sha(2), date: "2024-04-02T10:00:00Z", message: "Document the helper", login: "mona", name: "Mona Lisa", files: [{ filename: "docs/a.md", status: "added" }] },
    {
      sha: sha(1),
      date: "2024-04-01T10:00:00Z",
      message: "Initial commit",
      login: "octo",
      name: "Octo Cat",
      files: [
        { filename: "src/old.ts", status: "added" },
        { filename: "README.md", status: "added" },
      ],
    },
  ];
}

const fileProto = () => {
  const { patch: _none, ...file } = example<{ files: Record<string, unknown>[] }>("GET /repos/{owner}/{repo}/commits/{ref}").files[0]!;
  // GitHub's example leaves out two fields its schema requires; a real answer has them.
  return { ...file, sha: "f".repeat(40), contents_url: "https://api.github.test/repos/acme/api/contents/x" };
};

/** Serves `commits` (newest first) on the commits list and the single-commit endpoints. */
function serve(gh: FakeGitHub, commits: FakeCommit[]) {
  const commitFields = (c: FakeCommit) => ({
    sha: c.sha,
    commit: { message: c.message, author: { name: c.name, email: "dev@example.com", date: c.date }, committer: { name: c.name, email: "dev@example.com", date: c.date } },
    author: c.login ? { login: c.login } : null,
  });
  gh.on("GET /repos/{owner}/{repo}/commits", (req) => {
    const from = req.query.sha === undefined || req.query.sha === "main" ? 0 : commits.findIndex((c) => c.sha === req.query.sha);
    if (from < 0) return { status: 404, body: errorBody("No commit found for SHA") };
    const since = req.query.since;
    const listed = commits.slice(from).filter((c) => !since || c.date >= since);
    const perPage = Number(req.query.per_page ?? 30);
    const page = Number(req.query.page ?? 1);
    return { body: listed.slice((page - 1) * perPage, page * perPage).map((c) => exampleItem("GET /repos/{owner}/{repo}/commits", commitFields(c))) };
  });
  gh.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => {
    const c = commits.find((x) => x.sha === req.path.ref);
    if (!c) return { status: 422, body: errorBody(`No commit found for SHA: ${req.path.ref}`) };
    return {
      body: example("GET /repos/{owner}/{repo}/commits/{ref}", { ...commitFields(c), files: c.files.map((f) => ({ ...fileProto(), ...f })) }),
      ...(c.more ? { headers: { link: `<https://api.github.test/repositories/1/commits/${c.sha}?page=2>; rel="next"` } } : {}),
    };
  });
}

async function setup(prefix: string, commits = history()): Promise<{ w: World; gh: FakeGitHub; ctx: Ctx; repo: string; commits: FakeCommit[] }> {
  const w = await newWorld(prefix, { start: START });
  const gh = new FakeGitHub();
  const ctx = await connectGitHub(w.ctx, gh);
  serve(gh, commits);
  const repo = (await ok(ctx, "repo_register", { remote_url: "https://api.github.test/acme/api" })).repository.id as string;
  return { w, gh, ctx, repo, commits };
}

const eventsOf = (w: World) => () => count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", w.id.tenantId);

describe("change_import_git", () => {
  it("writes one event per file a commit touched, at the commit's date, with its message, sha and author", async () => {
    const { w, ctx, repo } = await setup("impgit-happy");
    const r = await ok(ctx, "change_import_git", { repo, changeset_id: "history" });
    // c1: 2 files, c2: 1, c3: 1, c4: a rename and a removal; the rename writes both of its halves.
    expect(r).toMatchObject({ repo: "acme/api", commits: 4, imported: 6, skipped: 0, warnings: [] });
    expect(r.next_cursor).toBeUndefined();
    expect(await eventsOf(w)()).toBe(7);

    const history = (await ok(ctx, "change_history", { limit: 20 })).items as Structured[];
    expect(history.map((e) => [e.timestamp, e.change_type, e.entity_path, e.git_commit.slice(-1)])).toEqual([
      ["2024-04-04T10:00:00.000Z", "delete", "docs/a.md", "4"],
      ["2024-04-04T10:00:00.000Z", "create", "src/new.ts", "4"],
      ["2024-04-04T10:00:00.000Z", "rename", "src/old.ts", "4"],
      ["2024-04-03T10:00:00.000Z", "modify", "src/old.ts", "3"],
      ["2024-04-02T10:00:00.000Z", "add", "docs/a.md", "2"],
      ["2024-04-01T10:00:00.000Z", "add", "README.md", "1"],
      ["2024-04-01T10:00:00.000Z", "add", "src/old.ts", "1"],
    ]);
    expect(history[1]).toMatchObject({
      entity_type: "file",
      agent: "git:mona",
      git_commit: sha(4),
      changeset_id: "history",
      // The registered repository's name: it is no project's primary repository.
      project: "api",
      reasoning: "Move the helper next to its callers\n\nThe docs page is obsolete.",
      metadata: { renamed_from: "src/old.ts" },
    });
    // Without a login, the author's name.
    expect(history[3]!.agent).toBe("git:Hubot");
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ? AND import_key = ?", w.id.tenantId, `git:acme/api:${sha(4)}:src/new.ts`)).toBe(1);

    expect(await ok(ctx, "blame", { entity_path: "docs/a.md" })).toMatchObject({ change_type: "delete", status: "reverted" });
    const attempts = await ok(ctx, "prior_attempts", { entity_path: "docs/a.md" });
    expect(attempts.items.map((a: Structured) => [a.change_type, a.outcome])).toEqual([["add", "reverted"]]);
    expect(await ok(ctx, "change_verify", {})).toMatchObject({ intact: true, checked: 7 });
  });

  it("imports a real public commit as GitHub published it (Codertocat/Hello-World's first, from @octokit/webhooks-examples)", async () => {
    const pushes = examples.find((e) => e.name === "push")!.examples as Array<{ commits: PushCommit[] }>;
    const real = pushes.flatMap((p) => p.commits)[0]!;
    const commit: FakeCommit = {
      sha: real.id,
      date: real.timestamp,
      message: real.message,
      login: real.author.username,
      name: real.author.name,
      files: [
        ...real.added.map((f) => ({ filename: f, status: "added" })),
        ...real.modified.map((f) => ({ filename: f, status: "modified" })),
        ...real.removed.map((f) => ({ filename: f, status: "removed" })),
      ],
    };
    const { ctx, repo } = await setup("impgit-real", [commit]);
    expect(await ok(ctx, "change_import_git", { repo })).toMatchObject({ commits: 1, imported: 1, skipped: 0 });
    expect(await ok(ctx, "blame", { entity_path: "README.md" })).toMatchObject({
      change_type: "add",
      timestamp: "2019-05-15T15:19:25.000Z",
      git_commit: "6113728f27ae82c7b1a177c8d03f9e96e0adf246",
      reasoning: "Initial commit",
      agent: "git:Codertocat",
    });
  });

  it("imports nothing new on a re-run: every file is skipped", async () => {
    const { w, ctx, repo } = await setup("impgit-rerun");
    await ok(ctx, "change_import_git", { repo });
    const rows = await eventsOf(w)();
    expect(await ok(ctx, "change_import_git", { repo })).toMatchObject({ commits: 4, imported: 0, skipped: 6 });
    expect(await eventsOf(w)()).toBe(rows);
  });

  it("walks back page by page with the cursor, from the head it started at", async () => {
    const { ctx, repo, commits, gh } = await setup("impgit-pages");
    const first = await ok(ctx, "change_import_git", { repo, max_commits: 2 });
    expect(first).toMatchObject({ commits: 2, imported: 3 });
    expect(typeof first.next_cursor).toBe("string");
    // A commit pushed meanwhile does not shift the walk.
    commits.unshift({ sha: sha(5), date: "2024-04-05T10:00:00Z", message: "Later work", name: "Mona Lisa", files: [{ filename: "src/later.ts", status: "added" }] });
    const second = await ok(ctx, "change_import_git", { repo, max_commits: 50, cursor: first.next_cursor });
    expect(second).toMatchObject({ commits: 2, imported: 3, skipped: 0 });
    const lists = gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/commits");
    expect(lists[1]!.query).toMatchObject({ sha: sha(4), page: "2", per_page: "2" });
    // The page was full, so one more call finds the end.
    const third = await ok(ctx, "change_import_git", { repo, cursor: second.next_cursor });
    expect(third).toMatchObject({ commits: 0, imported: 0 });
    expect(third.next_cursor).toBeUndefined();
    const paths = (await ok(ctx, "change_history", { limit: 20 })).items.map((e: Structured) => e.entity_path);
    expect(paths).not.toContain("src/later.ts");
    // A fresh walk starts at the new head and skips what is already in.
    expect(await ok(ctx, "change_import_git", { repo })).toMatchObject({ commits: 5, imported: 1, skipped: 6 });
  });

  it("honours since, and keeps it in the cursor", async () => {
    const { ctx, repo, gh } = await setup("impgit-since");
    const r = await ok(ctx, "change_import_git", { repo, since: "2024-04-03T00:00:00Z", max_commits: 1 });
    expect(r).toMatchObject({ commits: 1, imported: 2 });
    const next = await ok(ctx, "change_import_git", { repo, cursor: r.next_cursor });
    expect(next).toMatchObject({ commits: 1, imported: 1 });
    expect(gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/commits").map((q) => q.query.since)).toEqual(["2024-04-03T00:00:00Z", "2024-04-03T00:00:00Z"]);
  });

  it("warns about commits it cannot read whole: more files than GitHub's first page, a date in the future", async () => {
    const commits = history();
    commits[1]!.more = true;
    commits[2]!.date = "2027-01-01T00:00:00Z";
    const { ctx, repo } = await setup("impgit-warn", commits);
    const r = await ok(ctx, "change_import_git", { repo });
    expect(r).toMatchObject({ commits: 4, imported: 5 });
    // Oldest commit first.
    expect(r.warnings).toEqual([
      "commit 2222222: its date '2027-01-01T00:00:00Z' is unreadable or in the future; not imported",
      "commit 3333333: only the first 1 files GitHub lists were imported (it lists at most 300 on a commit's first page)",
    ]);
  });

  it("refuses bad input before asking GitHub", async () => {
    const { w, ctx, repo, gh } = await setup("impgit-bad");
    const before = gh.requests.length;
    await refusedWithoutWrites(ctx, "change_import_git", { repo, max_commits: 51 }, "invalid_input", eventsOf(w));
    await refusedWithoutWrites(ctx, "change_import_git", { repo, since: "whenever" }, "invalid_since", eventsOf(w));
    await refusedWithoutWrites(ctx, "change_import_git", { repo, cursor: "not-a-cursor" }, "invalid_input", eventsOf(w));
    await refusedWithoutWrites(ctx, "change_import_git", { repo, branch: "main;rm" }, "unsafe_ref_token", eventsOf(w));
    expect(gh.requests.length).toBe(before);
    // A cursor of another repository is refused too.
    const other = (await ok(ctx, "repo_register", { remote_url: "https://api.github.test/acme/web" })).repository.id;
    const r = await ok(ctx, "change_import_git", { repo, max_commits: 1 });
    const err = await refusedWithoutWrites(ctx, "change_import_git", { repo: other, cursor: r.next_cursor }, "invalid_input", eventsOf(w));
    expect(err.message).toContain("acme/api");
  });

  it("answers not_found for a repository not registered here, and github_not_configured without credentials", async () => {
    const { w, ctx, gh } = await setup("impgit-missing");
    const before = gh.requests.length;
    expect((await fails(ctx, "change_import_git", { repo: "acme/unregistered" })).code).toBe("not_found");
    expect(gh.requests.length).toBe(before);

    const bare = await newWorld("impgit-nocreds", { start: START });
    const repo = (await ok(bare.ctx, "repo_register", { remote_url: "https://github.com/acme/api" })).repository.id;
    const fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(() => Promise.reject(new Error("no request expected")));
    const err = await refusedWithoutWrites(bare.ctx, "change_import_git", { repo }, "github_not_configured", eventsOf(bare));
    expect(err.hint.length).toBeGreaterThan(0);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(await eventsOf(w)()).toBe(0);
  });

  it("maps GitHub's rate limit to a retryable github_rate_limited", async () => {
    const { w, ctx, repo, gh } = await setup("impgit-limit");
    const reset = Math.floor(Date.now() / 1000) + 3600;
    gh.on("GET /repos/{owner}/{repo}/commits", () => ({ status: 403, body: errorBody("API rate limit exceeded"), headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) } }));
    const err = await refusedWithoutWrites(ctx, "change_import_git", { repo }, "github_rate_limited", eventsOf(w));
    expect(err.retryable).toBe(true);
  });

  it("keeps tenants apart: another tenant cannot import this one's repository, nor see its events", async () => {
    const { ctx, repo } = await setup("impgit-tenant-a");
    await ok(ctx, "change_import_git", { repo });
    const b = await newWorld("impgit-tenant-b", { start: START });
    const bCtx = { ...b.ctx, env: ctx.env };
    expect((await fails(bCtx, "change_import_git", { repo })).code).toBe("not_found");
    expect((await ok(bCtx, "change_history", {})).items).toEqual([]);
    expect((await call(bCtx, "blame", { entity_path: "src/new.ts" })).status).toBe("no_history");
  });
});
