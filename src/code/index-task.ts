/**
 * index_workspace and reindex_workspace as MCP tasks: the task follows its index until the job is
 * done. Complete is the task's result (the index's status); a failed job is a completed task whose
 * result is the failure (the tool ran; its work failed); a cleared index ends it as cancelled.
 */
import { failureResult, render } from "../core/call";
import { ToolError } from "../core/errors";
import type { TaskDriver } from "../core/task-driver";
import { indexById, isRunning, releaseDeadJob } from "./store";
import { statusOf } from "./index-status";

export const INDEX_TASK_DRIVER = "code.index";

/** To a client that declares the tasks extension, an index job is answered as a task that follows its index. */
export const INDEX_TASK = { driver: INDEX_TASK_DRIVER, link: (r: { index_id: string; job_id: string }) => ({ index_id: r.index_id, job_id: r.job_id }), pollMs: 5000 };

interface Link {
  index_id: string;
  job_id: string;
}

export const indexTaskDriver: TaskDriver = {
  async settle(ctx, _task, raw) {
    const link = raw as unknown as Link;
    const row = await indexById(ctx.d1, ctx.tenantId, link.index_id);
    if (!row || row.phase === "cleared") return { status: "cancelled", statusMessage: "The index was cleared (clear_index) before the job finished." };
    const repo = `${row.owner}/${row.name}@${row.ref}`;
    // A later job on the same index (a push, a re-index) carries this one's work on: the task follows the index.
    if (isRunning(row.phase) || row.phase === "idle") {
      const files = row.files_total > 0 ? ` ${row.files_done}/${row.files_total} files` : "";
      return { statusMessage: `${row.phase}${files}` };
    }
    if (row.phase === "failed") {
      const errors = JSON.parse(row.errors) as string[];
      const why = errors.at(-1) ?? "the job stopped";
      return {
        status: "completed",
        statusMessage: "",
        result: failureResult(
          new ToolError("index_failed", `Indexing ${repo} failed: ${why}`, {
            hint: "index_status shows the errors; index_workspace again resumes the job at the same commit.",
            retryable: true,
          }),
        ),
      };
    }
    const status = statusOf(row);
    return { status: "completed", statusMessage: "", result: render({ ok: true, ...status }, `Index of ${repo} complete at ${status.indexed_commit.slice(0, 12)}: ${status.chunks} chunks.`) };
  },
  async cancel(ctx, _task, raw) {
    const link = raw as unknown as Link;
    const row = await indexById(ctx.d1, ctx.tenantId, link.index_id);
    if (!row || row.job_id !== link.job_id || !isRunning(row.phase)) return;
    // The pending generation stays: index_workspace resumes from what this job had parsed.
    await (await ctx.env.CODE_INDEX.get(link.job_id)).terminate();
    await releaseDeadJob(ctx.d1, row, `job ${link.job_id} cancelled by its MCP task`, ctx.clock.now());
  },
};
