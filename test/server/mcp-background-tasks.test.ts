/**
 * Tools answered as MCP tasks (io.modelcontextprotocol/tasks on 2026-07-28) beyond the fixtures:
 * background tasks (src/server/tasks/background.ts), whose call the tool-tasks queue runs —
 * docs_execute's GitHub imports and execute_plan, with its confirmation asked through the task —
 * and reactive_review_pr's task, which follows its review session (src/review/reactive/task.ts).
 * The queue's consumer and the session's object run with the Worker's own env: the fakes they use
 * (GitHub, the model, the batch reviewer) are set on it and on the isolate's globals.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { taskResourceUri } from "../../src/core/task-driver";
import { listenToInbox } from "../../src/durable/inbox";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AiChatInput } from "../../src/llm/workers-ai";
import { reviewSessionStub, type BatchReviewer } from "../../src/review/reactive-sessions/runner";
import { useBatchReviewer } from "../../src/review/reactive-sessions/batch-reviewer";
import jsxDiff from "../fixtures/review/reactive/hono-3feb3551.diff?raw";
import requestDiff from "../fixtures/review/reactive/hono-79677607.diff?raw";
import { diffEntries, type DiffEntry, pullRequestFile } from "../support/github/diff-entries";
import { errorBody, example, FakeGitHub } from "../support/github/fake";
import { FakeRepo } from "../support/github/fake-repo";
import { serveTreesAndBlobs } from "../support/github/trees";
import { connectGitHub, TEST_CREDENTIALS_KEY } from "../support/github/tenant";
import { ScriptedAi } from "../support/llm-stand-in";
import { count, newWorld, ok, seedIdentity, type World } from "../support/helpers";
import { resultOf, sleep, taskCaller, tasksCapabilities, taskRowsOf, untilSettled, type Answer } from "../support/task-poll";

const caller = taskCaller("/mcp?toolsets=docs,plans,review");
const HOUR = 3_600_000;
const BACKGROUND = "tool.background";

// The queue's consumer and the review sessions' objects read the Worker's env: point it at the fake
// GitHub, and space review steps an hour apart so no alarm fires by itself while a test drives them.
const saved = { api: env.GITHUB_API_URL, key: env.GITHUB_CREDENTIALS_KEY, gap: env.REVIEW_STEP_GAP_MS, ai: env.AI, perMin: env.RATE_LIMIT_KEY_PER_MIN };
beforeEach(() => {
  Object.assign(env, { GITHUB_API_URL: "https://api.github.test", GITHUB_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY, REVIEW_STEP_GAP_MS: String(HOUR) });
});
afterEach(() => {
  Object.assign(env, { GITHUB_API_URL: saved.api, GITHUB_CREDENTIALS_KEY: saved.key, REVIEW_STEP_GAP_MS: saved.gap, AI: saved.ai, RATE_LIMIT_KEY_PER_MIN: saved.perMin });
});

/** The error of an answer that must have failed with `code`. */
function errorOf(a: Answer, code: number): { code: number; message: string } {
  expect(a.result, JSON.stringify(a)).toBeUndefined();
  expect(a.error?.code, JSON.stringify(a)).toBe(code);
  return a.error!;
}

/** An acknowledgement: resultType "complete" and nothing of the task. */
function expectAck(a: Answer): void {
  const { resultType, _meta: _m, ...rest } = resultOf(a);
  expect(resultType).toBe("complete");
  expect(rest).toEqual({});
}

/** A CreateTaskResult, checked to be one. */
function createdTask(a: Answer): Record<string, any> & { taskId: string } {
  const r = resultOf(a);
  expect(r.resultType, JSON.stringify(r)).toBe("task");
  expect(r.taskId).toEqual(expect.any(String));
  return r as Record<string, any> & { taskId: string };
}

/** tasks/get a few times, `gapMs` apart: the statuses read (a task that must stay as it is). */
async function statusesOver(key: string, taskId: string, times = 5, gapMs = 300): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < times; i++) {
    await sleep(gapMs);
    seen.push(resultOf(await caller.task(key, "tasks/get", taskId)).status as string);
  }
  return seen;
}

const writes = (gh: FakeGitHub) => gh.requests.filter((r) => r.method !== "GET");

// ---------------------------------------------------------------------------------------------
// docs_execute: a repository behind the fake GitHub, served as trees and blobs

const DOCS_REPO = "octocat/docs";
const DOCS = { "docs/a.md": "# Alpha\nalpha\n", "docs/sub/b.md": "# Bravo\nbravo\n", "other/x.md": "x-ray\n" };

interface DocsRig {
  w: World;
  gh: FakeGitHub;
  repo: FakeRepo;
}

async function docsRig(prefix: string): Promise<DocsRig> {
  const w = await newWorld(prefix, { start: new Date().toISOString() });
  const gh = new FakeGitHub();
  const repo = new FakeRepo(gh);
  repo.write("main", DOCS, "initial");
  serveTreesAndBlobs(gh, repo);
  await connectGitHub(w.ctx, gh);
  return { w, gh, repo };
}

const IMPORT = { operations: [{ op: "add", params: { repo: DOCS_REPO, path: "docs", collection: "handbook" } }] };
const livePaths = (tenantId: string) =>
  env.DB.prepare(`SELECT path FROM documents WHERE tenant_id = ? AND deleted_at IS NULL ORDER BY path`)
    .bind(tenantId)
    .all<{ path: string }>()
    .then((r) => r.results.map((d) => d.path));

// ---------------------------------------------------------------------------------------------
// execute_plan: a one-step plan whose model answer creates a file, committed on the default branch

const PLAN_REPO = "octocat/shop";
const NOTE = "# Changelog\n\n- Sign-in hashes passwords.\n";
const PLAN = {
  id: "changelog",
  goal: "Record the sign-in change in the changelog",
  steps: [{ step_number: 1, title: "Add a changelog entry", files_to_create: [{ path: "CHANGELOG.md", change_type: "create" }] }],
};
/** Committing on main, the repository's default branch: the tool asks first. */
const ON_MAIN = { plan: PLAN, step_number: 1, apply_changes: true, repo: PLAN_REPO, branch: "main" };
const CONFIRM_KEY = "confirm_branch_write";

interface PlanRig {
  w: World;
  gh: FakeGitHub;
  repo: FakeRepo;
  main: string;
  ai: ScriptedAi;
}

async function planRig(prefix: string): Promise<PlanRig> {
  const w = await newWorld(prefix, { start: new Date().toISOString() });
  const gh = new FakeGitHub();
  const repo = new FakeRepo(gh);
  const main = repo.write("main", { "README.md": "# Shop\n" }, "initial");
  const ai = new ScriptedAi((input: AiChatInput) =>
    input.messages[1]!.content.includes("## Step 1:")
      ? { reasoning: "A changelog entry for the sign-in change.", changes: [{ path: "CHANGELOG.md", change_type: "create", content: NOTE, explanation: "New changelog." }] }
      : "{}",
  );
  // The queue's consumer runs the plan with the Worker's env: the model is the stand-in there.
  Object.assign(env, { AI: ai });
  await connectGitHub(w.ctx, gh);
  return { w, gh, repo, main, ai };
}

/** Starts execute_plan on main as a task, from a client that can be asked, and waits for its question. */
async function parkedOnQuestion(r: PlanRig): Promise<{ taskId: string; task: Record<string, any> }> {
  const { taskId } = createdTask(await caller.call(r.w.id.key, "execute_plan", ON_MAIN, { capabilities: tasksCapabilities(true), headers: { "Mcp-Param-Repository": PLAN_REPO } }));
  const task = await untilSettled(caller, r.w.id.key, taskId);
  expect(task.status, JSON.stringify(task)).toBe("input_required");
  return { taskId, task };
}

const answer = (action: "accept" | "decline", content?: Record<string, unknown>) => ({ inputResponses: { [CONFIRM_KEY]: { action, ...(content ? { content } : {}) } } });

// ---------------------------------------------------------------------------------------------

describe("docs_execute as a background task", () => {
  it("answers an import with a CreateTaskResult; the queue runs it and the task completes with the batch's result", async () => {
    const { w, gh } = await docsRig("bgt-import");
    const created = createdTask(await caller.call(w.id.key, "docs_execute", IMPORT));
    expect(created).toMatchObject({ resultType: "task", status: "working", pollIntervalMs: 3000, ttlMs: 86_400_000 });
    expect(created.result).toBeUndefined();

    const rows = await taskRowsOf(w.id.tenantId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: created.taskId, actor_id: w.id.actorId, tool: "docs_execute", driver: BACKGROUND });
    expect(JSON.parse(rows[0]!.link)).toMatchObject({ args: IMPORT, actorName: "agent", canAsk: false, answers: {} });

    const done = await untilSettled(caller, w.id.key, created.taskId);
    expect(done, JSON.stringify(done)).toMatchObject({ taskId: created.taskId, status: "completed" });
    expect(done.error).toBeUndefined();
    const result = done.result.structuredContent;
    expect(result).toMatchObject({ ok: true, totalOps: 1, succeeded: 1, failed: 0 });
    expect(result.results[0]).toMatchObject({ op: "add", success: true, data: { repo: DOCS_REPO, ref: "main", total_files: 2, truncated: false } });
    expect(result.results[0].data.imported.map((f: { path: string }) => f.path)).toEqual(["docs/a.md", "docs/sub/b.md"]);
    expect(done.result.isError).toBeUndefined();

    // The documents are in the store, readable by the caller's own tools.
    expect(await livePaths(w.id.tenantId)).toEqual(["docs/a.md", "docs/sub/b.md"]);
    const found = await ok(w.ctx, "docs_query", { steps: [{ op: "grep", params: { pattern: "bravo", files_with_matches: true } }] });
    expect(found.paths).toEqual(["docs/sub/b.md"]);
    expect(gh.count("GET /repos/{owner}/{repo}/git/blobs/{file_sha}")).toBe(2);
    expect((await taskRowsOf(w.id.tenantId))[0]!.status).toBe("completed");
  });

  it("charges the run's ops against the caller's rate limits when it runs: over the limit, the task's result is rate_limited and nothing is imported", async () => {
    const { w, gh } = await docsRig("bgt-limited");
    // Five units a minute for the key: the request is one, its eight ops need seven more.
    Object.assign(env, { RATE_LIMIT_KEY_PER_MIN: "5" });
    const inline = Array.from({ length: 7 }, (_, i) => ({ op: "add", params: { name: `notes/n${i}.md`, content: `note ${i}\n` } }));
    const created = createdTask(await caller.call(w.id.key, "docs_execute", { operations: [...IMPORT.operations, ...inline] }));
    const done = await untilSettled(caller, w.id.key, created.taskId);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", result: { isError: true, structuredContent: { ok: false, error: { code: "rate_limited" } } } });
    expect(done.result.structuredContent.error.message).toContain("8 units");
    expect(await livePaths(w.id.tenantId)).toEqual([]);
    expect(gh.requests).toEqual([]);
  });

  it("answers a batch that fetches nothing from elsewhere at once, writing no task", async () => {
    const { w, gh } = await docsRig("bgt-inline");
    const r = resultOf(await caller.call(w.id.key, "docs_execute", { operations: [{ op: "add", params: { name: "notes/inline.md", content: "# Inline\nwritten here\n" } }] }));
    expect(r.resultType).toBe("complete");
    expect(r.taskId).toBeUndefined();
    expect(r.structuredContent).toMatchObject({ ok: true, totalOps: 1, succeeded: 1, results: [{ op: "add", success: true }] });
    expect(await taskRowsOf(w.id.tenantId)).toEqual([]);
    expect(await livePaths(w.id.tenantId)).toEqual(["notes/inline.md"]);
    expect(gh.requests).toEqual([]);
  });

  it("answers an import at once, as before, to a client that does not declare the extension", async () => {
    const { w } = await docsRig("bgt-sync");
    const r = resultOf(await caller.call(w.id.key, "docs_execute", IMPORT, { capabilities: { elicitation: { form: {} } } }));
    expect(r.resultType).toBe("complete");
    expect(r.taskId).toBeUndefined();
    expect(r.structuredContent).toMatchObject({ ok: true, succeeded: 1 });
    expect(r.structuredContent.results[0].data.imported.map((f: { path: string }) => f.path)).toEqual(["docs/a.md", "docs/sub/b.md"]);
    expect(await taskRowsOf(w.id.tenantId)).toEqual([]);
    expect(await livePaths(w.id.tenantId)).toEqual(["docs/a.md", "docs/sub/b.md"]);
  });

  it("refuses invalid arguments at once with isError, writing no task and running nothing", async () => {
    const { w, gh } = await docsRig("bgt-invalid");
    const empty = resultOf(await caller.call(w.id.key, "docs_execute", { operations: [] }));
    expect(empty.resultType).toBe("complete");
    expect(empty.isError).toBe(true);
    expect(empty.taskId).toBeUndefined();
    expect(empty.structuredContent).toMatchObject({ ok: false, error: { code: "invalid_input" } });

    // An import (so a background call) whose batch-level arguments are wrong: refused before any task.
    const bad = resultOf(await caller.call(w.id.key, "docs_execute", { ...IMPORT, continue_on_error: "yes" }));
    expect(bad.resultType).toBe("complete");
    expect(bad.isError).toBe(true);
    expect(bad.taskId).toBeUndefined();
    expect(bad.structuredContent).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    expect(bad.structuredContent.error.message).toContain("continue_on_error");

    expect(await taskRowsOf(w.id.tenantId)).toEqual([]);
    await sleep(500);
    expect(gh.requests).toEqual([]);
    expect(await livePaths(w.id.tenantId)).toEqual([]);
  });

  it("keeps a task cancelled while its run was working: the run's answer is dropped", async () => {
    const { w, gh } = await docsRig("bgt-cancel-working");
    // Hold every GitHub answer until released: the run stays working meanwhile.
    let started = false;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      started = true;
      await gate;
      return gh.fetch(input, init);
    });
    try {
      const { taskId } = createdTask(await caller.call(w.id.key, "docs_execute", IMPORT));
      const until = Date.now() + 20_000;
      while (!started && Date.now() < until) await sleep(50);
      expect(started).toBe(true);

      expectAck(await caller.task(w.id.key, "tasks/cancel", taskId));
      const cancelled = resultOf(await caller.task(w.id.key, "tasks/get", taskId));
      expect(cancelled).toMatchObject({ taskId, status: "cancelled", statusMessage: "Cancelled by the client." });
      expect(cancelled.result).toBeUndefined();
    } finally {
      release();
    }
    // The run goes on to its end (the import is not stopped), and its answer is not stored.
    const until = Date.now() + 20_000;
    while ((await livePaths(w.id.tenantId)).length < 2 && Date.now() < until) await sleep(100);
    expect(await livePaths(w.id.tenantId)).toEqual(["docs/a.md", "docs/sub/b.md"]);
    const [row] = await taskRowsOf(w.id.tenantId);
    expect(await statusesOver(w.id.key, row!.id)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled", "cancelled"]);
    const after = resultOf(await caller.task(w.id.key, "tasks/get", row!.id));
    expect(after.result).toBeUndefined();
    expect((await taskRowsOf(w.id.tenantId))[0]).toMatchObject({ status: "cancelled", result: null, error: null });
  });

  it("keeps a task to the actor that made it: another actor of the tenant and another tenant read it as unknown", async () => {
    const { w } = await docsRig("bgt-isolation");
    const { taskId } = createdTask(await caller.call(w.id.key, "docs_execute", IMPORT));
    const bob = await w.other("bob");
    const stranger = await seedIdentity(`bgt-stranger-${crypto.randomUUID().slice(0, 8)}`, "agent");
    for (const key of [bob.id.key, stranger.key]) {
      expect(errorOf(await caller.task(key, "tasks/get", taskId), -32602).message).toContain("Unknown task");
      errorOf(await caller.task(key, "tasks/cancel", taskId), -32602);
      errorOf(await caller.task(key, "tasks/update", taskId, { inputResponses: { [CONFIRM_KEY]: { action: "accept", content: { confirm: true } } } }), -32602);
    }
    // The owner's task went on, untouched.
    const done = await untilSettled(caller, w.id.key, taskId);
    expect(done).toMatchObject({ taskId, status: "completed", result: { structuredContent: { ok: true, succeeded: 1 } } });
  });
});

describe("execute_plan as a background task", () => {
  it("asks its confirmation through the task; accepted, the run goes on and commits", async () => {
    const r = await planRig("bgt-plan-accept");
    const { taskId, task } = await parkedOnQuestion(r);
    expect(Object.keys(task.inputRequests)).toEqual([CONFIRM_KEY]);
    const asked = task.inputRequests[CONFIRM_KEY];
    expect(asked.method).toBe("elicitation/create");
    expect(asked.params.message).toContain(`${PLAN_REPO}'s default branch 'main'`);
    expect(asked.params.requestedSchema).toMatchObject({ type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] });
    expect(task.statusMessage).toBe(asked.params.message);
    expect(task.result).toBeUndefined();
    const [row] = await taskRowsOf(r.w.id.tenantId);
    expect(row).toMatchObject({ id: taskId, tool: "execute_plan", driver: BACKGROUND, status: "input_required" });
    expect(JSON.parse(row!.link)).toMatchObject({ canAsk: true, answers: {} });
    // Asked before the model ran or anything was written.
    expect(r.ai.inputs).toHaveLength(0);
    expect(writes(r.gh)).toEqual([]);

    expectAck(await caller.task(r.w.id.key, "tasks/update", taskId, answer("accept", { confirm: true })));
    expect(JSON.parse((await taskRowsOf(r.w.id.tenantId))[0]!.link).answers).toEqual({ [CONFIRM_KEY]: "accepted" });

    const done = await untilSettled(caller, r.w.id.key, taskId);
    expect(done, JSON.stringify(done)).toMatchObject({ taskId, status: "completed" });
    expect(done.inputRequests).toBeUndefined();
    const result = done.result.structuredContent;
    expect(done.result.isError).toBeUndefined();
    expect(result).toMatchObject({ ok: true, success: true, plan_id: "changelog", apply_changes: true });
    expect(result.step_results).toEqual([expect.objectContaining({ step_number: 1, success: true })]);
    const head = r.repo.refs.get("main")!;
    expect(head).not.toBe(r.main);
    expect(result.github).toMatchObject({ repo: PLAN_REPO, branch: "main", start_sha: r.main, head_sha: head, commits: [{ step_number: 1, sha: head }] });
    expect(r.repo.files("main")).toEqual({ "README.md": "# Shop\n", "CHANGELOG.md": NOTE });
    expect(r.ai.inputs).toHaveLength(1);
  });

  it("ends with confirmation_declined when the person declines, committing nothing", async () => {
    const r = await planRig("bgt-plan-decline");
    const { taskId } = await parkedOnQuestion(r);
    expectAck(await caller.task(r.w.id.key, "tasks/update", taskId, answer("decline")));
    const done = await untilSettled(caller, r.w.id.key, taskId);
    expect(done, JSON.stringify(done)).toMatchObject({ taskId, status: "completed", result: { isError: true, structuredContent: { ok: false, error: { code: "confirmation_declined" } } } });
    expect(r.ai.inputs).toHaveLength(0);
    expect(writes(r.gh)).toEqual([]);
    expect(r.repo.refs.get("main")).toBe(r.main);
  });

  it("needs confirm: true from a client that cannot be asked", async () => {
    const r = await planRig("bgt-plan-cannot-ask");
    const refused = createdTask(await caller.call(r.w.id.key, "execute_plan", ON_MAIN, { headers: { "Mcp-Param-Repository": PLAN_REPO } }));
    const first = await untilSettled(caller, r.w.id.key, refused.taskId);
    expect(first, JSON.stringify(first)).toMatchObject({ status: "completed", result: { isError: true, structuredContent: { error: { code: "confirmation_required" } } } });
    expect(writes(r.gh)).toEqual([]);

    const confirmed = createdTask(await caller.call(r.w.id.key, "execute_plan", { ...ON_MAIN, confirm: true }, { headers: { "Mcp-Param-Repository": PLAN_REPO } }));
    const done = await untilSettled(caller, r.w.id.key, confirmed.taskId);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", result: { structuredContent: { ok: true, success: true } } });
    expect(r.repo.files("main")["CHANGELOG.md"]).toBe(NOTE);
  });

  it("stays cancelled when cancelled while it waits for an answer, even if the answer comes after", async () => {
    const r = await planRig("bgt-plan-cancel");
    const { taskId } = await parkedOnQuestion(r);
    expectAck(await caller.task(r.w.id.key, "tasks/cancel", taskId));
    const cancelled = resultOf(await caller.task(r.w.id.key, "tasks/get", taskId));
    expect(cancelled).toMatchObject({ taskId, status: "cancelled", statusMessage: "Cancelled by the client." });
    expect(cancelled.inputRequests).toBeUndefined();

    // An answer to a cancelled task is acknowledged and ignored: nothing runs.
    expectAck(await caller.task(r.w.id.key, "tasks/update", taskId, answer("accept", { confirm: true })));
    expect(await statusesOver(r.w.id.key, taskId)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled", "cancelled"]);
    expect((await taskRowsOf(r.w.id.tenantId))[0]).toMatchObject({ status: "cancelled", result: null, input_requests: "{}" });
    expect(r.ai.inputs).toHaveLength(0);
    expect(writes(r.gh)).toEqual([]);
    expect(r.repo.refs.get("main")).toBe(r.main);
  });
});

// ---------------------------------------------------------------------------------------------
// reactive_review_pr: sessions over real diffs, steps run by hand with the object's alarms

const OWNER = "honojs";
const NAME = "hono";
const HONO = `${OWNER}/${NAME}`;
const JSX_SHA = "3feb3551d46de1f633e82253f12cf1117316be93";
const JSX_PARENT = "5d911d2ab7bcb2adb2e974ddd5b17742fb5a0bca";
const REQ_SHA = "7967760748503b50de7c315fe3aa76666a8e6cab";
const JSX_FILES = diffEntries(jsxDiff);
const REQ_FILES = diffEntries(requestDiff);

const apiFile = (f: DiffEntry, sha: string) => pullRequestFile(HONO, f, sha);

/** A reviewer that finds nothing and names the batch's files. */
const quietReviewer: BatchReviewer = async (_ctx, input) => ({ findings: [], risk_score: 1, classification: "bugfix", summary: `${input.changedFiles.length} file(s)` });

describe("reactive_review_pr as a task", () => {
  let previous: BatchReviewer | null = null;
  beforeEach(() => {
    previous = useBatchReviewer(quietReviewer);
  });
  afterEach(() => {
    useBatchReviewer(previous);
  });

  async function reviewRig(prefix: string): Promise<World> {
    const w = await newWorld(prefix, { start: new Date().toISOString() });
    const gh = new FakeGitHub();
    gh.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => {
      const sha = [JSX_SHA, REQ_SHA].find((s) => s.startsWith(req.path.ref!));
      return sha ? { body: example("GET /repos/{owner}/{repo}/commits/{ref}", { sha, files: [] }) } : { status: 404, body: errorBody(`No commit found for SHA: ${req.path.ref}`) };
    });
    gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", (req) => {
      const head = req.path.basehead!.split("...")[1]!;
      const files = head === JSX_SHA ? JSX_FILES : REQ_FILES;
      return { body: example("GET /repos/{owner}/{repo}/compare/{basehead}", { files: files.map((f) => apiFile(f, head)) }) };
    });
    await connectGitHub(w.ctx, gh);
    return w;
  }

  const review = (sha: string, files: DiffEntry[]) => ({ repo: HONO, commit_hash: sha.slice(0, 12), base_ref: JSX_PARENT, changed_files: JSON.stringify(files.map((f) => f.filename)) });

  async function startedReview(w: World, sha: string, files: DiffEntry[]): Promise<{ taskId: string; sessionId: string }> {
    const created = createdTask(await caller.call(w.id.key, "reactive_review_pr", review(sha, files), { headers: { "Mcp-Param-Repository": HONO } }));
    expect(created).toMatchObject({ status: "working", pollIntervalMs: 5000 });
    const row = (await taskRowsOf(w.id.tenantId)).find((t) => t.id === created.taskId)!;
    expect(row).toMatchObject({ tool: "reactive_review_pr", driver: "review.session", status: "working" });
    const link = JSON.parse(row.link) as { session_id: string };
    expect(Object.keys(link)).toEqual(["session_id"]);
    expect(await count(`SELECT COUNT(*) AS n FROM review_sessions WHERE tenant_id = ? AND id = ?`, w.id.tenantId, link.session_id)).toBe(1);
    return { taskId: created.taskId, sessionId: link.session_id };
  }

  it("follows its session: working with the step while it reviews, completed with get_review_status's result", async () => {
    const w = await reviewRig("bgt-review");
    const { taskId, sessionId } = await startedReview(w, JSX_SHA, JSX_FILES);

    const working = resultOf(await caller.task(w.id.key, "tasks/get", taskId));
    expect(working).toMatchObject({ taskId, status: "working", statusMessage: "reviewing: step 1 of 3" });
    expect(working.statusMessage).toMatch(/^reviewing:/);
    expect(working.result).toBeUndefined();

    // Each step the session runs rings the task's resource on its owner's bell.
    const rung: (string | undefined)[] = [];
    let ready!: () => void;
    const open = new Promise<void>((resolve) => (ready = resolve));
    const stop = listenToInbox(env, w.id.tenantId, w.id.actorId, (uri) => rung.push(uri), ready);
    await open;
    const stub = reviewSessionStub(env, w.id.tenantId, sessionId);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    for (let i = 0; i < 50 && rung.length === 0; i++) await sleep(20);
    stop();
    expect(rung).toEqual([taskResourceUri(taskId)]);
    expect(resultOf(await caller.task(w.id.key, "tasks/get", taskId))).toMatchObject({ status: "working", statusMessage: "reviewing: step 2 of 3" });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const status = await ok(w.ctx, "get_review_status", { session_id: sessionId });
    expect(status.session.status).toBe("completed");
    const done = resultOf(await caller.task(w.id.key, "tasks/get", taskId));
    expect(done).toMatchObject({ taskId, status: "completed" });
    expect(done.statusMessage).toBeUndefined();
    expect(done.result.isError).toBeUndefined();
    expect(done.result.structuredContent).toMatchObject({
      ok: true,
      session: { session_id: sessionId, status: "completed", total_steps: 3 },
      progress: { completed_steps: 3, total_steps: 3, percentage: 100 },
    });
    expect(done.result.structuredContent.session).toEqual(status.session);
    expect(done.result.structuredContent.result).toEqual(status.result);
    expect(done.result.structuredContent.result).toMatchObject({ reviewed_commit: JSX_SHA, files_reviewed: 8, batches: 2 });
    expect((await taskRowsOf(w.id.tenantId))[0]!.status).toBe("completed");
  });

  it("cancels its session when the task is cancelled", async () => {
    const w = await reviewRig("bgt-review-cancel");
    const kept = await startedReview(w, JSX_SHA, JSX_FILES);
    const { taskId, sessionId } = await startedReview(w, REQ_SHA, REQ_FILES);
    expect(resultOf(await caller.task(w.id.key, "tasks/get", taskId))).toMatchObject({ status: "working", statusMessage: expect.stringMatching(/^reviewing: step 1 of \d+$/) });

    expectAck(await caller.task(w.id.key, "tasks/cancel", taskId));
    const status = await ok(w.ctx, "get_review_status", { session_id: sessionId });
    expect(status.session).toMatchObject({ status: "cancelled", error: "Cancelled by its MCP task." });
    const task = resultOf(await caller.task(w.id.key, "tasks/get", taskId));
    expect(task).toMatchObject({ taskId, status: "cancelled", statusMessage: "Cancelled by the client." });
    expect(task.result).toBeUndefined();

    // The other review and its task go on.
    expect((await ok(w.ctx, "get_review_status", { session_id: kept.sessionId })).session.status).toBe("executing");
    expect(resultOf(await caller.task(w.id.key, "tasks/get", kept.taskId))).toMatchObject({ status: "working" });
  });
});
