/**
 * The git tools end to end: the MCP SDK client drives `wrangler dev`, whose GITHUB_API_URL points
 * at a fake GitHub on loopback (every request checked against GitHub's OpenAPI description) with
 * an in-memory repository behind it.
 */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { FakeGitHub } from "../support/github/fake";
import { FakeArchives } from "../support/github/fake-archive";
import { FakeRepo } from "../support/github/fake-repo";
import { FakeComments } from "../support/github/fake-comments";
import { sign } from "@octokit/webhooks-methods";
import { diffEntries } from "../support/github/diff-entries";
import { errorBody, example, exampleItem } from "../support/github/fake";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { framesOf, modernRequest } from "../support/modern";
import { serveFetch, type LoopbackServer } from "./support/github-server";

type S = Record<string, unknown> & { ok: boolean };
const structured = (r: Awaited<ReturnType<Client["callTool"]>>) => r.structuredContent as S;
const REPO = "octocat/Hello-World";

async function connect(key: string, toolsets = "git"): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=${toolsets}`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "e2e-git", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A 2026-07-28 client that answers confirmation questions with `answer`, recording them. */
async function connectModern(key: string, answer: boolean): Promise<{ client: ModernClient; asked: string[] }> {
  const transport = new ModernTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=git`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new ModernClient({ name: "e2e-modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } });
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { confirm: answer } };
  });
  await client.connect(transport);
  return { client, asked };
}

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** Task answers are the extension's shapes, which the SDK's own result schemas do not know. */
const Loose = z.looseObject({});

/** A 2026-07-28 client that declares the tasks extension (or, with declare false, does not). */
async function connectTasks(key: string, toolsets: string, declare = true): Promise<ModernClient> {
  const transport = new ModernTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=${toolsets}`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new ModernClient(
    { name: "e2e-tasks", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: declare ? { extensions: { [TASKS_EXTENSION]: {} } } : {} },
  );
  await client.connect(transport);
  // The listing declares which arguments travel as Mcp-Param-* headers; the client mirrors them once it has it.
  await client.listTools();
  return client;
}

/**
 * tools/call answered as a task. The SDK's v2 client (2.4) has no call that accepts a
 * CreateTaskResult, so this one request is sent as the client would send it; tasks/* then go
 * through the SDK's client.
 */
async function startTask(key: string, toolsets: string, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(
    `${inject("baseUrl")}/mcp?toolsets=${toolsets}`,
    modernRequest(key, "tools/call", { name: tool, arguments: args }, { name: tool, headers: { "Mcp-Param-Repository": REPO }, capabilities: { extensions: { [TASKS_EXTENSION]: {} } } }),
  );
  const frames = await framesOf(res);
  const answer = frames.at(-1)!;
  if (!answer.result) throw new Error(`${tool} was refused: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** Polls tasks/get until the task ends. */
async function untilDone(client: ModernClient, taskId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 240; i++) {
    const task = await client.request({ method: "tasks/get", params: { taskId } }, Loose);
    if (["completed", "failed", "cancelled"].includes(String(task.status))) return task;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`task ${taskId} did not end`);
}

describe("git tools over HTTP (wrangler dev → fake GitHub on loopback)", () => {
  let github: LoopbackServer;
  let gh: FakeGitHub;
  let repo: FakeRepo;
  let archives: FakeArchives;
  let client: Client;

  beforeAll(async () => {
    const port = inject("githubPort");
    gh = new FakeGitHub(`http://127.0.0.1:${port}`);
    repo = new FakeRepo(gh);
    // One tarball server for every index job of the file: a second would answer before it.
    archives = new FakeArchives(gh);
    repo.write("main", { "README.md": "hello\n", "src/a.ts": "a1\n" }, "initial");
    github = await serveFetch(gh.fetch, port);
    client = await connect(inject("keyA"));
  });

  afterAll(async () => {
    await client?.close();
    await github?.close();
  });

  it("commits, merges and cherry-picks on GitHub, moving branches without force", async () => {
    const committed = structured(
      await client.callTool({
        name: "batch_commit",
        // A client without elicitation confirms writes to the default branch with the parameter.
        arguments: {
          repo: REPO,
          format: "json",
          confirm: true,
          commits: [
            { message: "feat: b", files: [{ path: "src/b.ts", content: "b1\n" }] },
            { message: "docs: readme", files: [{ path: "README.md", content: "hello world\n" }] },
          ],
        },
      }),
    );
    expect(committed).toMatchObject({ ok: true, committed: 2, total: 2 });
    expect(repo.files("main")).toMatchObject({ "README.md": "hello world\n", "src/b.ts": "b1\n", "src/a.ts": "a1\n" });

    const base = repo.write("feature/x", { "src/c.ts": "c1\n" }, "feat: c", repo.refs.get("main"));
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    const merged = structured(await client.callTool({ name: "git_merge", arguments: { repo: REPO, sources: ["feature/x"], into: "main", format: "json", confirm: true } }));
    expect(merged).toMatchObject({ ok: true, into: "main", applied: 1, results: [{ source: "feature/x", ok: true, outcome: "fast_forward" }] });
    expect(repo.files("main")["src/c.ts"]).toBe("c1\n");

    repo.write("hotfix-branch", { "src/a.ts": "a2\n" }, "fix: a", repo.refs.get("main"));
    repo.write("main", { "src/d.ts": "d1\n" }, "feat: d");
    const picked = structured(await client.callTool({ name: "git_cherry_pick", arguments: { repo: REPO, sources: ["hotfix-branch"], onto: "main", format: "json", confirm: true } }));
    expect(picked).toMatchObject({ ok: true, onto: "main", applied: 1 });
    expect(repo.files("main")).toMatchObject({ "src/a.ts": "a2\n", "src/d.ts": "d1\n" });
    expect(repo.tempRefs()).toEqual([]);
    expect(gh.requests.some((r) => r.body?.force === true)).toBe(false);
  });

  it("asks before a batch_commit to the default branch (input_required): a no changes nothing, a yes commits, with progress", async () => {
    const before = repo.refs.get("main");
    const commits = [
      { message: "chore: e", files: [{ path: "src/e.ts", content: "e1\n" }] },
      { message: "chore: f", files: [{ path: "src/f.ts", content: "f1\n" }] },
    ];
    const no = await connectModern(inject("keyA"), false);
    const declined = await no.client.callTool({ name: "batch_commit", arguments: { repo: REPO, format: "json", commits } });
    expect(declined.isError).toBe(true);
    expect((declined.structuredContent as { error: { code: string } }).error.code).toBe("confirmation_declined");
    expect(no.asked).toEqual([expect.stringContaining("default branch 'main'")]);
    expect(repo.refs.get("main")).toBe(before);
    await no.client.close();

    const yes = await connectModern(inject("keyA"), true);
    const progress: number[] = [];
    const accepted = await yes.client.callTool({ name: "batch_commit", arguments: { repo: REPO, format: "json", commits } }, { onprogress: (p) => progress.push(p.progress) });
    expect(accepted.structuredContent).toMatchObject({ ok: true, committed: 2, branch: "main" });
    expect(yes.asked).toHaveLength(1);
    // The v2 client may report a notification more than once; the wire is checked below.
    expect([...new Set(progress)]).toEqual([1, 2]);
    expect(repo.files("main")).toMatchObject({ "src/e.ts": "e1\n", "src/f.ts": "f1\n" });

    // A feature branch is not asked about.
    const feature = await yes.client.callTool({
      name: "batch_commit",
      arguments: { repo: REPO, branch: "feature/quiet", base: "main", format: "json", commits: [{ message: "chore: q", files: [{ path: "q.txt", content: "q" }] }] },
    });
    expect(feature.structuredContent).toMatchObject({ ok: true, created: true });
    expect(yes.asked).toHaveLength(1);
    await yes.client.close();

    // On the wire: one progress notification per commit, in order, then the result, on one SSE response.
    const res = await fetch(`${inject("baseUrl")}/mcp?toolsets=git`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${inject("keyA")}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "batch_commit",
        // The listing marks a write's repository as a header (x-mcp-header): a raw client mirrors it.
        "Mcp-Param-Repository": REPO,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "batch_commit",
          arguments: {
            repo: REPO,
            branch: "feature/quiet",
            format: "json",
            commits: [
              { message: "g", files: [{ path: "g.txt", content: "g" }] },
              { message: "h", files: [{ path: "h.txt", content: "h" }] },
            ],
          },
          _meta: {
            progressToken: "p1",
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: { progress: number; progressToken: string }; result?: unknown });
    expect(frames.filter((f) => f.method === "notifications/progress").map((f) => [f.params!.progressToken, f.params!.progress])).toEqual([
      ["p1", 1],
      ["p1", 2],
    ]);
    expect(frames.at(-1)!.result).toMatchObject({ structuredContent: { ok: true, committed: 2 } });
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

  it("indexes the repository on the platform's workflow and answers code questions from it (tree-sitter in the bundle)", async () => {
    const head = repo.refs.get("main")!;
    archives.add("octocat", "Hello-World", head, {
      "src/cart.ts": "export interface Item { price: number; qty: number }\n\nexport function cartTotal(items: Item[]): number {\n  return items.reduce((sum, i) => sum + i.price * i.qty, 0);\n}\n",
      "src/checkout.ts": 'import { cartTotal } from "./cart";\n\nexport function checkout(items: { price: number; qty: number }[]) {\n  return { total: cartTotal(items) };\n}\n',
      "scripts/report.py": "def monthly_revenue(orders):\n    return sum(o['total'] for o in orders)\n",
      "cmd/main.go": "package main\n\nfunc Add(a int, b int) int {\n\treturn a + b\n}\n",
    });
    const code = await connect(inject("keyA"), "code");
    try {
      const started = structured(await code.callTool({ name: "index_workspace", arguments: { repo: REPO, ref: "main" } }));
      expect(started).toMatchObject({ ok: true, status: "started" });
      let status: S = { ok: false };
      for (let i = 0; i < 120; i++) {
        status = structured(await code.callTool({ name: "index_status", arguments: { repo: REPO, check_head: false } }));
        const item = (status.items as S[])[0]!;
        if (item.phase === "complete" || item.phase === "failed") break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect((status.items as S[])[0]).toMatchObject({ phase: "complete", complete: true, indexed_commit: head, files_total: 4, errors: [] });
      const found = structured(await code.callTool({ name: "semantic_search", arguments: { query: "total price of the cart items" } }));
      expect((found.results as S[]).slice(0, 2).map((h) => h.path)).toContain("src/cart.ts");
      // Each grammar ran inside the bundle: symbols of TypeScript, Python and Go.
      for (const [symbol, path] of [
        ["cartTotal", "src/cart.ts"],
        ["monthly_revenue", "scripts/report.py"],
        ["Add", "cmd/main.go"],
      ]) {
        const def = structured(await code.callTool({ name: "symbol_definition", arguments: { symbol } }));
        expect(def, symbol).toMatchObject({ ok: true, items: [{ path }] });
      }
      const callers = structured(await code.callTool({ name: "find_callers", arguments: { symbol: "cartTotal" } }));
      expect(callers.items).toEqual([expect.objectContaining({ caller: "checkout", path: "src/checkout.ts" })]);
    } finally {
      await code.close();
    }
  }, 60_000);
  it("runs a reactive pull-request review on Durable Object alarms under wrangler dev, from start to stored result", async () => {
    // A real change (honojs/hono 7967760, MIT) as pull request #9 of the fake repository.
    const files = diffEntries(readFileSync(`${import.meta.dirname}/../fixtures/review/reactive/hono-79677607.diff`, "utf8"));
    const head = repo.write("fix/params", { "src/request.ts": "changed\n" }, "fix(request): handle params on unmatched requests", repo.refs.get("main"));
    gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}", () => ({
      body: example("GET /repos/{owner}/{repo}/pulls/{pull_number}", { number: 9, head: { sha: head }, base: { ref: "main" }, requested_teams: [] }),
    }));
    gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({
      body: files.map((f) => exampleItem("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", { ...f, changes: f.additions + f.deletions })),
    }));
    // No .review-invariants.yml in this repository.
    gh.on("GET /repos/{owner}/{repo}/contents/{path}", () => ({ status: 404, body: errorBody("Not Found") }));
    const review = await connect(inject("keyA"), "review");
    try {
      const started = structured(
        await review.callTool({ name: "reactive_review_pr", arguments: { repo: REPO, commit_hash: head, base_ref: "main", changed_files: files.map((f) => f.filename).join(","), pull_number: 9 } }),
      );
      expect(started).toMatchObject({ ok: true, status: "executing", total_steps: 3 });
      let status: S = { ok: false };
      for (let i = 0; i < 120; i++) {
        status = structured(await review.callTool({ name: "get_review_status", arguments: { session_id: started.session_id } }));
        if ((status.session as S).status !== "executing") break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(status.session).toMatchObject({ status: "completed", error: null, pull_number: 9 });
      expect(status.result).toMatchObject({ reviewed_commit: head, files_reviewed: 2, batches: 1 });
      const telemetry = structured(await review.callTool({ name: "get_review_telemetry", arguments: { session_id: started.session_id } }));
      expect((telemetry.telemetry as { steps: S[] }).steps.map((s) => `${s.kind}:${s.status}`)).toEqual(["review_batch:completed", "merge:completed", "publish:skipped"]);
    } finally {
      await review.close();
    }
  }, 60_000);

  it("runs index and review jobs as MCP tasks for the SDK's v2 client that declares the tasks extension: polled with tasks/get to their results, cancelled with tasks/cancel", async () => {
    const head = repo.write("tasks", { "src/tax.ts": "export function withTax(total: number): number {\n  return total * 1.2;\n}\n" }, "add tax", repo.refs.get("main"));
    archives.add("octocat", "Hello-World", head, { "src/tax.ts": "export function withTax(total: number): number {\n  return total * 1.2;\n}\n" });
    const client = await connectTasks(inject("keyA"), "code,review");
    try {
      expect(client.getServerCapabilities()?.extensions).toHaveProperty([TASKS_EXTENSION]);
      const created = await startTask(inject("keyA"), "code,review", "index_workspace", { repo: REPO, ref: "tasks" });
      expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: 86_400_000, pollIntervalMs: 5000 });
      expect(created).not.toHaveProperty("structuredContent");
      expect(created._meta).toMatchObject({ "agent-ledger/started": { job_id: expect.any(String), ref: "tasks" } });
      // The SDK's own callTool refuses an answer whose resultType is "task" (it knows only complete and input_required).
      await expect(client.callTool({ name: "index_workspace", arguments: { repo: REPO, ref: "tasks" } })).rejects.toThrow(/Unsupported result type 'task'/);
      const indexed = await untilDone(client, String(created.taskId));
      expect(indexed).toMatchObject({ status: "completed", result: { structuredContent: { ok: true, phase: "complete", ref: "tasks", indexed_commit: head, files_total: 1 } } });
      expect((indexed.result as { content: { text: string }[] }).content[0]!.text).toMatch(/^Index of octocat\/Hello-World@tasks complete/);

      // The pull request #9 set up by the review test above, reviewed again as a task.
      const pr = repo.refs.get("fix/params")!;
      const changed = "src/request.ts";
      const review = await startTask(inject("keyA"), "code,review", "reactive_review_pr", { repo: REPO, commit_hash: pr, base_ref: "main", changed_files: changed, pull_number: 9 });
      expect(review).toMatchObject({ resultType: "task", status: "working" });
      const reviewed = await untilDone(client, String(review.taskId));
      expect(reviewed).toMatchObject({ status: "completed", result: { structuredContent: { ok: true, session: { status: "completed", pull_number: 9 } } } });

      // A second review, cancelled: the session stops and the task says so; a second cancel is answered the same.
      const doomed = await startTask(inject("keyA"), "code,review", "reactive_review_pr", { repo: REPO, commit_hash: pr, base_ref: "main", changed_files: changed });
      const ack = await client.request({ method: "tasks/cancel", params: { taskId: String(doomed.taskId) } }, Loose);
      // The SDK reads resultType "complete" off the ack; nothing of the task comes with it.
      expect(Object.keys(ack).filter((k) => k !== "_meta")).toEqual([]);
      await client.request({ method: "tasks/cancel", params: { taskId: String(doomed.taskId) } }, Loose);
      expect(await client.request({ method: "tasks/get", params: { taskId: String(doomed.taskId) } }, Loose)).toMatchObject({ status: "cancelled" });

      // Without the extension the same call answers the job id, as it always did.
      const plain = await connectTasks(inject("keyA"), "code", false);
      const old = await plain.callTool({ name: "index_workspace", arguments: { repo: REPO, ref: "tasks" } });
      expect(old.structuredContent).toMatchObject({ ok: true, job_id: expect.any(String) });
      await plain.close();
    } finally {
      await client.close();
    }
  }, 90_000);

  it("keeps two agents apart where the write happens: a reserved path blocks another actor's batch_commit and leaves the branch unchanged", async () => {
    const holder = await connect(inject("keyA"), "git,repos,coordination");
    const other = await connect(inject("raceKeys")[0]!, "git,coordination");
    // Registered on the host the fake GitHub serves (GITHUB_API_URL), as the git tools find it.
    const registered = structured(await holder.callTool({ name: "repo_register", arguments: { remote_url: `http://127.0.0.1:${inject("githubPort")}/${REPO}` } }));
    expect(registered.ok, JSON.stringify(registered)).toBe(true);
    const held = structured(await holder.callTool({ name: "path_reserve", arguments: { repository_id: REPO, paths: ["src/locked/"], reason: "e2e rewrite" } }));
    expect(held).toMatchObject({ ok: true, reserved: true });
    const before = repo.refs.get("main");
    const requests = gh.requests.length;
    const refused = structured(
      await other.callTool({ name: "batch_commit", arguments: { repo: REPO, confirm: true, format: "json", commits: [{ message: "mine", files: [{ path: "src/locked/a.ts", content: "x\n" }] }] } }),
    );
    expect(refused).toMatchObject({ ok: false, error: { code: "path_reserved", retryable: true } });
    expect((refused.error as { message: string }).message).toContain("held by claude-code as src/locked/**");
    expect(repo.refs.get("main")).toBe(before);
    // Refused before GitHub was asked anything.
    expect(gh.requests.length).toBe(requests);
    // The holder commits under its fencing token; released, the other's commit goes through.
    const mine = structured(
      await holder.callTool({
        name: "batch_commit",
        arguments: { repo: REPO, confirm: true, format: "json", fencing_token: held.fencing_token, commits: [{ message: "held", files: [{ path: "src/locked/a.ts", content: "held\n" }] }] },
      }),
    );
    expect(mine).toMatchObject({ ok: true, committed: 1 });
    await holder.callTool({ name: "path_release", arguments: { repository_id: REPO } });
    const after = structured(
      await other.callTool({
        name: "batch_commit",
        arguments: { repo: REPO, confirm: true, format: "json", commits: [{ message: "now mine", files: [{ path: "src/locked/a.ts", content: "other\n" }] }] },
      }),
    );
    expect(after).toMatchObject({ ok: true, committed: 1 });
    expect(repo.files("main")["src/locked/a.ts"]).toBe("other\n");
    await holder.close();
    await other.close();
  });

  it("tells a pull request's story in one comment, posted once and edited on the next push; provenance of the finished task lists every link", async () => {
    const lead = await connect(inject("keyA"), "git,repos,coordination,review,projects,tasks,changes,decisions");
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = structured(await lead.callTool({ name, arguments: args }));
      expect(r.ok, `${name}: ${JSON.stringify(r).slice(0, 400)}`).toBe(true);
      return r;
    };
    const remote = `http://127.0.0.1:${inject("githubPort")}/${REPO}`;
    await call("repo_register", { remote_url: remote });
    await call("review_settings", { repo: REPO, pr_story: true });
    const comments = new FakeComments(REPO, 42);
    comments.serve(gh, ["src/story.ts"]);
    await call("project_create", { title: "Story", key: "STORY" });
    const task = (await call("task_create", { project_id: "STORY", title: "Tell the story" })).task as { id: string; ref: string };
    await call("task_claim", { task_id: task.id });
    await call("decision_log", { project_id: "STORY", title: "Stories in PRs", choice: "One comment, edited", rationale: "No noise in the thread" });
    await call("log_change", { entity_path: "src/story.ts", change_type: "add", reasoning: "the story module", changeset_id: task.ref });

    const pr = (action: string, sha: string) =>
      JSON.stringify({
        action,
        number: 42,
        repository: { full_name: REPO, html_url: remote, default_branch: "main" },
        pull_request: { number: 42, title: `${task.ref}: tell the story`, body: "", draft: false, head: { sha, ref: "story" }, base: { ref: "main" } },
      });
    const deliver = async (event: string, body: string) => {
      const r = await fetch(`${inject("baseUrl")}/webhooks/github/e2e-a`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-GitHub-Event": event, "X-GitHub-Delivery": crypto.randomUUID(), "X-Hub-Signature-256": await sign("e2e-webhook-secret", body) },
        body,
      });
      expect(r.status).toBe(202);
    };
    const waitFor = async (what: string, probe: () => boolean) => {
      for (let i = 0; i < 100 && !probe(); i++) await new Promise((r) => setTimeout(r, 100));
      expect(probe(), what).toBe(true);
    };
    const writes = () => gh.requests.filter((r) => r.method !== "GET" && (r.path.issue_number === "42" || r.path.comment_id !== undefined)).map((r) => r.method);

    const first = "a".repeat(40);
    await deliver("pull_request", pr("opened", first));
    await waitFor("the story comment", () => comments.bodies.size === 1);
    const [id, body] = [...comments.bodies][0]!;
    expect(body).toContain(task.ref);
    expect(body).toContain("src/story.ts");
    expect(writes()).toEqual(["POST"]);

    await call("log_change", { entity_path: "src/story.ts", change_type: "modify", reasoning: "edit on the next push", changeset_id: task.ref });
    await deliver("pull_request", pr("synchronize", "b".repeat(40)));
    await waitFor("the edit", () => comments.bodies.get(id)!.includes("edit on the next push"));
    expect(comments.bodies.size).toBe(1);
    expect(writes()).toEqual(["POST", "PATCH"]);

    await deliver(
      "check_run",
      JSON.stringify({
        action: "completed",
        repository: { full_name: REPO, html_url: remote },
        check_run: {
          id: 4242,
          name: "ci / test",
          status: "completed",
          conclusion: "success",
          head_sha: "b".repeat(40),
          html_url: `${remote}/runs/4242`,
          check_suite: { head_branch: "story" },
          pull_requests: [],
        },
      }),
    );
    await call("task_update", { task_id: task.id, patch: { status: "done" } });
    let kinds: string[] = [];
    for (let i = 0; i < 50; i++) {
      const chain = (await call("provenance", { task_id: task.id })).items as { kind: string }[];
      kinds = [...new Set(chain.map((e) => e.kind))];
      if (kinds.includes("ci")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(kinds).toEqual(expect.arrayContaining(["claim", "decision", "change", "pr", "ci"]));
    await lead.close();
  });
});
