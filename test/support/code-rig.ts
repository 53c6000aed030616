/**
 * A tenant connected to a fake GitHub that serves a repository's tarball, and a helper that
 * indexes it through the real Workflow: the code tests and the plan tests start from here.
 */
import { env } from "cloudflare:workers";
import { introspectWorkflowInstance } from "cloudflare:test";
import { afterEach, beforeEach, expect } from "vitest";
import type { Ctx } from "../../src/core/context";
import { NAME, OWNER, REPO, SHOP_TREE } from "../fixtures/code/shop";
import { example, exampleItem, FakeGitHub } from "./github/fake";
import { FakeArchives, type ArchiveTree } from "./github/fake-archive";
import { connectGitHub, TEST_CREDENTIALS_KEY } from "./github/tenant";
import { newWorld, ok, type Structured, type TestClock } from "./helpers";

export interface Rig {
  ctx: Ctx;
  gh: FakeGitHub;
  archives: FakeArchives;
  sha: string;
  clock: TestClock;
}

/** The workflow runs with the Worker's own env: call at the top of a test file to point it at the fake GitHub. */
export function workflowsUseFakeGitHub(): void {
  const saved = { api: env.GITHUB_API_URL, key: env.GITHUB_CREDENTIALS_KEY };
  beforeEach(() => {
    Object.assign(env, { GITHUB_API_URL: "https://api.github.test", GITHUB_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY });
  });
  afterEach(() => {
    Object.assign(env, { GITHUB_API_URL: saved.api, GITHUB_CREDENTIALS_KEY: saved.key });
  });
}

export async function rig(prefix: string, tree: ArchiveTree = SHOP_TREE): Promise<Rig> {
  const w = await newWorld(prefix, { start: "2026-11-20T12:00:00.000Z" });
  const gh = new FakeGitHub();
  const archives = new FakeArchives(gh);
  const sha = archives.add(OWNER, NAME, "main", tree);
  const heads = new Map([["main", sha]]);
  gh.on("GET /repos/{owner}/{repo}", () => ({
    body: example("GET /repos/{owner}/{repo}", { name: NAME, full_name: REPO, default_branch: "main", language: "TypeScript", source: { language: "TypeScript" } }),
  }));
  gh.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => {
    const ref = (req.path as { ref: string }).ref;
    const head = heads.get(ref) ?? ref;
    return { body: example("GET /repos/{owner}/{repo}/commits/{ref}", { sha: head, files: [] }) };
  });
  gh.on("GET /repos/{owner}/{repo}/commits", () => ({
    body: [
      exampleItem("GET /repos/{owner}/{repo}/commits", {
        sha,
        commit: { message: "Add password hashing to sign-in", author: { name: "Ada", date: "2026-11-19T10:00:00Z", email: "ada@example.test" } },
      }),
    ],
  }));
  const ctx = await connectGitHub(w.ctx, gh);
  return { ctx, gh, archives, sha, clock: w.clock };
}

export async function indexed(r: Rig): Promise<Structured> {
  const started = await ok(r.ctx, "index_workspace", { repo: REPO });
  expect(started.status).toBe("started");
  await using instance = await introspectWorkflowInstance(env.CODE_INDEX, started.job_id);
  await instance.waitForStatus("complete");
  return started;
}
