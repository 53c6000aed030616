/**
 * An index job as a Cloudflare Workflow: every bounded step of src/code/indexer.ts is one durable
 * step, so a failure retries only its own step and a restarted instance skips what is done. The
 * instance id is the job id, and the index row's lock (code_indexes.job_id) keeps one job per
 * repository and ref.
 */
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import type { Env } from "../env";
import { failureText } from "../core/errors";
import { commitsStep, dropGeneration, embedBatch, failJob, fetchFiles, parseBatch, resolveTarget, SUPERSEDED, switchGeneration, type IndexJob } from "./indexer";
import { applyIncremental, finishIncrementalJob } from "./incremental";
import { INDEX_TASK_DRIVER } from "./index-task";
import { ringTaskFollowers } from "../durable/inbox";

const STEP: WorkflowStepConfig = { retries: { limit: 4, delay: "2 seconds", backoff: "exponential" }, timeout: "5 minutes" };
/** More batches than any repository within the limits needs; a loop past it is a bug, not work. */
const MAX_BATCHES = 2_000;

/**
 * A step's callback that logs `[code-index] <job> <step> <ms>` when it returns, so an operator (and
 * bench/code.ts, which reads wrangler dev's output) sees what each step cost. It is wall time: a
 * Worker's clock moves only across I/O, and every step ends on a D1 round trip, so the figure
 * covers the step's CPU and its waits alike. A step the engine replays from its stored result
 * runs no callback and logs nothing. Logging changes nothing the step does or returns. After the
 * step, the owners of MCP tasks following the index hear it moved (the task's resource is rung).
 */
function timed<T>(env: Env, job: IndexJob, name: string, callback: () => Promise<T>): () => Promise<T> {
  return async () => {
    const started = Date.now();
    const result = await callback();
    console.info(`[code-index] ${job.jobId} ${name} ${Date.now() - started}`);
    await ringTaskFollowers(env, job.tenantId, INDEX_TASK_DRIVER, "index_id", job.indexId);
    return result;
  };
}

export class CodeIndexWorkflow extends WorkflowEntrypoint<Env, IndexJob> {
  override async run(event: Readonly<WorkflowEvent<IndexJob>>, step: WorkflowStep): Promise<{ commit: string; files: number }> {
    const job = event.payload;
    try {
      const target = await step.do(
        "resolve",
        STEP,
        timed(this.env, job, "resolve", () => resolveTarget(this.env, job)),
      );
      let files: number;
      if (job.kind === "incremental") {
        files = (
          await step.do(
            "fetch changed",
            STEP,
            timed(this.env, job, "fetch changed", () => applyIncremental(this.env, job, target)),
          )
        ).files;
      } else {
        files = (
          await step.do(
            "fetch",
            STEP,
            timed(this.env, job, "fetch", () => fetchFiles(this.env, job, target)),
          )
        ).files;
        await step.do(
          "commits",
          STEP,
          timed(this.env, job, "commits", () => commitsStep(this.env, job)),
        );
      }
      for (let i = 0; i < MAX_BATCHES; i++) {
        const r = await step.do(
          `parse ${i}`,
          STEP,
          timed(this.env, job, `parse ${i}`, () => parseBatch(this.env, job, target)),
        );
        if (r.remaining === 0) break;
      }
      for (let i = 0; i < MAX_BATCHES; i++) {
        const r = await step.do(
          `embed ${i}`,
          STEP,
          timed(this.env, job, `embed ${i}`, () => embedBatch(this.env, job, target)),
        );
        // Chunks whose embedding keeps failing stay pending for the scheduled backfill.
        if (r.remaining === 0 || r.stalled) break;
      }
      if (job.kind === "full") {
        const { old } = await step.do(
          "switch",
          STEP,
          timed(this.env, job, "switch", () => switchGeneration(this.env, job, target)),
        );
        for (let i = 0; i < MAX_BATCHES; i++) {
          if (
            await step.do(
              `drop ${i}`,
              STEP,
              timed(this.env, job, `drop ${i}`, () => dropGeneration(this.env, job.tenantId, old)),
            )
          )
            break;
        }
      } else {
        await step.do(
          "advance",
          STEP,
          timed(this.env, job, "advance", () => finishIncrementalJob(this.env, job, target.commit)),
        );
      }
      return { commit: target.commit, files };
    } catch (err) {
      // A job that lost its lock (the index was cleared or taken over) just stops.
      if (err instanceof Error && err.message.startsWith(SUPERSEDED)) return { commit: "", files: 0 };
      const message = failureText(err, "code index job");
      await step.do(
        "record failure",
        timed(this.env, job, "record failure", () => failJob(this.env, job, message)),
      );
      throw err;
    }
  }
}
