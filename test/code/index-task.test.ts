/**
 * index_workspace as an MCP task (src/code/index-task.ts), with the real code-index Workflow and
 * the fake GitHub: the CreateTaskResult over HTTP and the row that follows the job, then the
 * driver as tasks/get settles it (running, complete, failed, cleared) and as tasks/cancel stops it.
 */
import { env } from "cloudflare:workers";
import { introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { taskResourceUri } from "../../src/core/task-driver";
import { listenToInbox } from "../../src/durable/inbox";
import { taskDrivers } from "../../src/server/tasks/drivers";
import { settleTask } from "../../src/server/tasks/methods";
import { createTask, type TaskRow } from "../../src/server/tasks/store";
import { TASK_TTL_MS } from "../../src/server/tasks/wire";
import { REPO } from "../fixtures/code/shop";
import { indexed, type Rig, rig, workflowsUseFakeGitHub } from "../support/code-rig";
import { ok, seedIdentity, type Structured, type TestIdentity } from "../support/helpers";
import { callRpc, taskRowsOf, taskRpc, workerWithTasks } from "../support/tasks";

workflowsUseFakeGitHub();

// Requests reach the Worker with the test's env, so the fake GitHub the rig points it at is the one they use.
const fetch = workerWithTasks({ fixtures: false });
const PATH = "/mcp?toolsets=code";
/** index_workspace mirrors its repo into a header on 2026-07-28 (SEP-2243). */
const REPO_HEADER = { "Mcp-Param-Repository": REPO };
const drivers = taskDrivers(false);

/** A key for the rig's own caller (same tenant and actor), to reach it over HTTP. */
async function keyOf(r: Rig): Promise<TestIdentity> {
  const slug = (await env.DB.prepare(`SELECT slug FROM tenants WHERE id = ?`).bind(r.ctx.tenantId).first<{ slug: string }>())!.slug;
  const id = await seedIdentity(slug, r.ctx.actorName);
  expect(id.actorId).toBe(r.ctx.actorId);
  return id;
}

/** Holds every tarball download until the returned release is called: a job started meanwhile stays running. */
function holdDownloads(r: Rig): () => void {
  const archives = r.archives as unknown as { download(req: Request): Promise<Response> };
  const download = archives.download.bind(r.archives);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  archives.download = async (req) => {
    await gate;
    return download(req);
  };
  return release;
}

const indexRow = (r: Rig) =>
  env.DB.prepare(`SELECT id, job_id, phase, errors, files_done, files_total FROM code_indexes WHERE tenant_id = ?`)
    .bind(r.ctx.tenantId)
    .first<{ id: string; job_id: string; phase: string; errors: string; files_done: number; files_total: number }>();

/** A task row that follows the started job, as tools/call writes one. */
const followJob = (ctx: Ctx, started: Structured): Promise<TaskRow> =>
  createTask(ctx, { tool: "index_workspace", driver: "code.index", link: { index_id: started.index_id, job_id: started.job_id }, ttlMs: TASK_TTL_MS, pollMs: 5000 });

const settle = (ctx: Ctx, row: TaskRow) => settleTask(ctx, drivers, row);

async function waitFor(jobId: string, status: "complete" | "terminated"): Promise<void> {
  await using instance = await introspectWorkflowInstance(env.CODE_INDEX, jobId);
  await instance.waitForStatus(status);
}

describe("index_workspace over HTTP on 2026-07-28", () => {
  it("answers a CreateTaskResult that follows the job to a client that declares the extension, and the job id to one that does not", async () => {
    const r = await rig("itask-http");
    const me = await keyOf(r);
    const asTask = await callRpc(fetch, me.key, "index_workspace", { repo: REPO }, { path: PATH, headers: REPO_HEADER });
    expect(asTask.status, JSON.stringify(asTask.body)).toBe(200);
    const created = asTask.body.result as Structured;
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: TASK_TTL_MS, pollIntervalMs: 5000 });
    expect(created.structuredContent).toBeUndefined();
    const index = (await indexRow(r))!;
    expect(index.job_id).not.toBe("");
    const rows = await taskRowsOf(r.ctx.tenantId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: created.taskId, actor_id: r.ctx.actorId, tool: "index_workspace", driver: "code.index", status: "working", poll_ms: 5000 });
    expect(JSON.parse(rows[0]!.link)).toEqual({ index_id: index.id, job_id: index.job_id });
    // The answer a client without the extension gets rides along, job id included.
    expect(created._meta).toMatchObject({ "agent-ledger/started": { job_id: index.job_id, index_id: index.id, status: "started", repo: REPO } });

    await waitFor(index.job_id, "complete");
    const done = await taskRpc(fetch, me.key, "tasks/get", created.taskId, {}, { path: PATH });
    expect(done.body.result, JSON.stringify(done.body)).toMatchObject({ taskId: created.taskId, status: "completed", result: { structuredContent: { ok: true, phase: "complete" } } });

    const plain = await callRpc(fetch, me.key, "index_workspace", { repo: REPO }, { path: PATH, headers: REPO_HEADER, capabilities: {} });
    const result = plain.body.result as Structured;
    expect(result.resultType).toBe("complete");
    expect(result.taskId).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ ok: true, status: "started", index_id: index.id, repo: REPO, phase: "queued" });
    expect(result.structuredContent.job_id).not.toBe(index.job_id);
    expect(await taskRowsOf(r.ctx.tenantId)).toHaveLength(1);
    await waitFor(result.structuredContent.job_id as string, "complete");
  });
});

describe("the code.index driver", () => {
  it("rings the task's resource on its owner's bell as the job's steps run", async () => {
    const r = await rig("itask-ring");
    const release = holdDownloads(r);
    const started = await ok(r.ctx, "index_workspace", { repo: REPO });
    const row = await followJob(r.ctx, started);
    const heard: (string | undefined)[] = [];
    let ready!: () => void;
    const open = new Promise<void>((resolve) => (ready = resolve));
    const stop = listenToInbox(env, r.ctx.tenantId, r.ctx.actorId, (uri) => heard.push(uri), ready);
    await open;
    release();
    await waitFor(started.job_id as string, "complete");
    stop();
    // resolve, fetch, commits, the parse and embed batches, switch: each step rang the task's resource, and nothing else.
    expect(heard.length).toBeGreaterThanOrEqual(5);
    expect(new Set(heard)).toEqual(new Set([taskResourceUri(row.id)]));
  });

  it("keeps the task working with the phase while the job runs, and completes it with the index's status", async () => {
    const r = await rig("itask-run");
    const release = holdDownloads(r);
    const started = await ok(r.ctx, "index_workspace", { repo: REPO });
    const row = await followJob(r.ctx, started);

    const running = await settle(r.ctx, row);
    expect(running.status).toBe("working");
    expect(running.statusMessage).toMatch(/^(queued|fetching)$/);
    expect(running.result).toBeNull();

    // Mid-parse, as the parse steps leave the row.
    await env.DB.prepare(`UPDATE code_indexes SET phase = 'parsing', files_done = 3, files_total = 10 WHERE id = ?`).bind(started.index_id).run();
    const parsing = await settle(r.ctx, running);
    expect(parsing).toMatchObject({ status: "working", statusMessage: "parsing 3/10 files", result: null });

    release();
    await waitFor(started.job_id as string, "complete");
    const done = await settle(r.ctx, parsing);
    expect(done.status).toBe("completed");
    expect(done.statusMessage).toBe("");
    const result = JSON.parse(done.result!) as Structured;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ ok: true, phase: "complete", complete: true, indexed_commit: r.sha, files_done: 6, errors: [] });
    expect(result.structuredContent.chunks).toBeGreaterThan(0);
    const [summary, json] = (result.content[0].text as string).split("\n");
    expect(summary).toBe(`Index of ${REPO}@main complete at ${r.sha.slice(0, 12)}: ${result.structuredContent.chunks} chunks.`);
    expect(JSON.parse(json!)).toEqual(result.structuredContent);
    // A finished task is not settled again: a later change of the index leaves it as it was.
    await env.DB.prepare(`UPDATE code_indexes SET phase = 'failed' WHERE id = ?`).bind(started.index_id).run();
    expect(await settle(r.ctx, done)).toEqual(done);
  });

  it("completes the task with the failure as its result when the job failed", async () => {
    const r = await rig("itask-failed");
    const started = await indexed(r);
    const row = await followJob(r.ctx, started);
    await env.DB.prepare(`UPDATE code_indexes SET phase = 'failed', errors = '["boom"]' WHERE id = ?`).bind(started.index_id).run();
    const done = await settle(r.ctx, row);
    expect(done.status).toBe("completed");
    expect(done.error).toBeNull();
    const result = JSON.parse(done.result!) as Structured;
    expect(result.isError).toBe(true);
    expect(result.structuredContent.ok).toBe(false);
    expect(result.structuredContent.error).toMatchObject({ code: "index_failed", retryable: true });
    expect(result.structuredContent.error.message).toBe(`Indexing ${REPO}@main failed: boom`);
    expect(result.structuredContent.error.hint).toContain("index_status");
  });

  it("cancels the task when the index was cleared", async () => {
    const r = await rig("itask-cleared");
    const started = await indexed(r);
    const row = await followJob(r.ctx, started);
    expect(await ok(r.ctx, "clear_index", { repo: REPO })).toMatchObject({ cleared: ["main"] });
    const gone = await settle(r.ctx, row);
    expect(gone).toMatchObject({ status: "cancelled", statusMessage: "The index was cleared (clear_index) before the job finished.", result: null, error: null });
  });

  it("stops the job on tasks/cancel: the workflow is terminated, the index marked failed, the task cancelled", async () => {
    const r = await rig("itask-cancel");
    const me = await keyOf(r);
    const release = holdDownloads(r);
    const created = (await callRpc(fetch, me.key, "index_workspace", { repo: REPO }, { path: PATH, headers: REPO_HEADER })).body.result as Structured;
    expect(created.resultType).toBe("task");
    const index = (await indexRow(r))!;
    expect(["queued", "fetching"]).toContain(index.phase);

    const ack = await taskRpc(fetch, me.key, "tasks/cancel", created.taskId, {}, { path: PATH });
    expect(ack.body.result?.resultType, JSON.stringify(ack.body)).toBe("complete");
    const after = (await indexRow(r))!;
    expect(after.phase).toBe("failed");
    expect(JSON.parse(after.errors)).toEqual([`job ${index.job_id} cancelled by its MCP task`]);
    expect((await (await env.CODE_INDEX.get(index.job_id)).status()).status).toBe("terminated");

    const got = await taskRpc(fetch, me.key, "tasks/get", created.taskId, {}, { path: PATH });
    expect(got.body.result).toMatchObject({ taskId: created.taskId, status: "cancelled", statusMessage: "Cancelled by the client." });
    expect((await taskRowsOf(r.ctx.tenantId))[0]).toMatchObject({ status: "cancelled", input_requests: "{}" });
    release();
  });
});
