/**
 * The git tools end to end: the MCP SDK client drives `wrangler dev`, whose GITHUB_API_URL points
 * at a fake GitHub on loopback (every request checked against GitHub's OpenAPI description) with
 * an in-memory repository behind it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { FakeGitHub } from "../github/fake";
import { FakeRepo } from "../github/fake-repo";
import { serveFetch, type LoopbackServer } from "./github-server";

type S = Record<string, unknown> & { ok: boolean };
const structured = (r: Awaited<ReturnType<Client["callTool"]>>) => r.structuredContent as S;
const REPO = "octocat/Hello-World";

async function connect(key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=git`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "e2e-git", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("git tools over HTTP (wrangler dev → fake GitHub on loopback)", () => {
  let github: LoopbackServer;
  let gh: FakeGitHub;
  let repo: FakeRepo;
  let client: Client;

  beforeAll(async () => {
    const port = inject("githubPort");
    gh = new FakeGitHub(`http://127.0.0.1:${port}`);
    repo = new FakeRepo(gh);
    repo.write("main", { "README.md": "hello\n", "src/a.ts": "a1\n" }, "initial");
    github = await serveFetch(gh.fetch, port);
    client = await connect(inject("keyA"));
  });

  afterAll(async () => {
    await client?.close();
    await github?.close();
  });

  it("commits, merges and cherry-picks on GitHub, moving branches without force", async () => {
    const committed = structured(await client.callTool({
      name: "batch_commit",
      arguments: { repo: REPO, format: "json", commits: [
        { message: "feat: b", files: [{ path: "src/b.ts", content: "b1\n" }] },
        { message: "docs: readme", files: [{ path: "README.md", content: "hello world\n" }] },
      ] },
    }));
    expect(committed).toMatchObject({ ok: true, committed: 2, total: 2 });
    expect(repo.files("main")).toMatchObject({ "README.md": "hello world\n", "src/b.ts": "b1\n", "src/a.ts": "a1\n" });

    const base = repo.write("feature/x", { "src/c.ts": "c1\n" }, "feat: c", repo.refs.get("main"));
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    const merged = structured(await client.callTool({ name: "git_merge", arguments: { repo: REPO, sources: ["feature/x"], into: "main", format: "json" } }));
    expect(merged).toMatchObject({ ok: true, into: "main", applied: 1, results: [{ source: "feature/x", ok: true, outcome: "fast_forward" }] });
    expect(repo.files("main")["src/c.ts"]).toBe("c1\n");

    repo.write("hotfix-branch", { "src/a.ts": "a2\n" }, "fix: a", repo.refs.get("main"));
    repo.write("main", { "src/d.ts": "d1\n" }, "feat: d");
    const picked = structured(await client.callTool({ name: "git_cherry_pick", arguments: { repo: REPO, sources: ["hotfix-branch"], onto: "main", format: "json" } }));
    expect(picked).toMatchObject({ ok: true, onto: "main", applied: 1 });
    expect(repo.files("main")).toMatchObject({ "src/a.ts": "a2\n", "src/d.ts": "d1\n" });
    expect(repo.tempRefs()).toEqual([]);
    expect(gh.requests.some((r) => r.body?.force === true)).toBe(false);
  });

  it("reads the repository back: git_status and git_log as the seed's JSON", async () => {
    const status = structured(await client.callTool({ name: "git_status", arguments: { repo: REPO, format: "json" } }));
    expect(status, JSON.stringify(status).slice(0, 600)).toMatchObject({ ok: true });
    const log = await client.callTool({ name: "git_log", arguments: { repo: REPO, format: "json", max_commits: 3 } });
    const text = (log.content as Array<{ type: string; text: string }>)[0]!.text;
    // The text is the seed's minified payload; structuredContent is the same payload in the envelope.
    expect(text).not.toMatch(/\n/);
    expect(JSON.parse(text)).toEqual(Object.fromEntries(Object.entries(structured(log)).filter(([k]) => k !== "ok")));
  });

  it("answers github_not_configured for a tenant without GitHub credentials, asking GitHub nothing", async () => {
    const before = gh.requests.length;
    const other = await connect(inject("keyB"));
    const r = structured(await other.callTool({ name: "batch_commit", arguments: { repo: REPO, commits: [{ message: "x", files: [{ path: "a", content: "b" }] }] } }));
    expect(r).toMatchObject({ ok: false, error: { code: "github_not_configured" } });
    expect(gh.requests.length).toBe(before);
    await other.close();
  });
});
