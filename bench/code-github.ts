/**
 * The fake GitHub the code benchmark indexes from, on a loopback port: the test suite's FakeGitHub
 * and FakeArchives (every request checked against GitHub's OpenAPI description, tarballs shaped
 * like git archive's) with the operations an index job calls (see test/code/index.test.ts rig()):
 * the repository, the ref's head commit, and the commit list (empty: the benchmark times the
 * index, not the commit backfill).
 */
import { freePort } from "../scripts/dev-server";
import { serveFetch, type LoopbackServer } from "../test/e2e/support/github-server";
import { example, FakeGitHub } from "../test/support/github/fake";
import { FakeArchives, type ArchiveTree } from "../test/support/github/fake-archive";

export const OWNER = "bench";

export interface BenchGitHub {
  /** GITHUB_API_URL for the Worker. */
  url: string;
  /** Serves `tree` as OWNER/name at branch main; returns the head commit. */
  add(name: string, tree: ArchiveTree): string;
  close(): Promise<void>;
}

export async function startBenchGitHub(): Promise<BenchGitHub> {
  const port = await freePort();
  const gh = new FakeGitHub(`http://127.0.0.1:${port}`);
  const archives = new FakeArchives(gh);
  // Megabyte pieces: the repository is tens of megabytes, and the reader's streaming is tested elsewhere.
  archives.chunkBytes = 1024 * 1024;
  const heads = new Map<string, string>();
  gh.on("GET /repos/{owner}/{repo}", (req) => {
    const { repo } = req.path as { repo: string };
    return { body: example("GET /repos/{owner}/{repo}", { name: repo, full_name: `${OWNER}/${repo}`, default_branch: "main" }) };
  });
  gh.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => {
    const { repo, ref } = req.path as { repo: string; ref: string };
    return { body: example("GET /repos/{owner}/{repo}/commits/{ref}", { sha: heads.get(`${repo}@${ref}`) ?? ref, files: [] }) };
  });
  gh.on("GET /repos/{owner}/{repo}/commits", () => ({ body: [] }));
  const server: LoopbackServer = await serveFetch(gh.fetch, port);
  return {
    url: server.url,
    add: (name, tree) => {
      const sha = archives.add(OWNER, name, "main", tree);
      heads.set(`${name}@main`, sha);
      return sha;
    },
    close: () => server.close(),
  };
}
