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

const STEP: WorkflowStepConfig = { retries: { limit: 4, delay: "2 seconds", backoff: "exponential" }, timeout: "5 minutes" };
/** More batches than any repository within the limits needs; a loop past it is a bug, not work. */
const MAX_BATCHES = 2_000;

/**
 * A step's callback that logs `[code-index] <job> <step> <ms>` when it returns, so an operator (and
 * bench/code.ts, which reads wrangler dev's output) sees what each step cost. It is wall time: a
 * Worker's clock moves only across I/O, and every step ends on a D1 round trip, so the figure
 * covers the step's CPU and its waits alike. A step the engine replays from its stored result
 * runs no callback and logs nothing. Logging changes nothing the step does or returns.
 */
function timed<T>(jobId: string, name: string, callback: () => Promise<T>): () => Promise<T> {
  return async () => {
    const started = Date.now();
    const result = await callback();
    console.info(`[code-index] ${jobId} ${name} ${Date.now() - started}`);
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
        timed(job.jobId, "resolve", () => resolveTarget(this.env, job)),
      );
      let files: number;
      if (job.kind === "incremental") {
        files = (
          await step.do(
            "fetch changed",
            STEP,
            timed(job.jobId, "fetch changed", () => applyIncremental(this.env, job, target)),
          )
        ).files;
      } else {
        files = (
          await step.do(
            "fetch",
            STEP,
            timed(job.jobId, "fetch", () => fetchFiles(this.env, job, target)),
          )
        ).files;
        await step.do(
          "commits",
          STEP,
          timed(job.jobId, "commits", () => commitsStep(this.env, job)),
        );
      }
      for (let i = 0; i < MAX_BATCHES; i++) {
        const r = await step.do(
          `parse ${i}`,
          STEP,
          timed(job.jobId, `parse ${i}`, () => parseBatch(this.env, job, target)),
        );
        if (r.remaining === 0) break;
      }
      for (let i = 0; i < MAX_BATCHES; i++) {
        const r = await step.do(
          `embed ${i}`,
          STEP,
          timed(job.jobId, `embed ${i}`, () => embedBatch(this.env, job, target)),
        );
        // Chunks whose embedding keeps failing stay pending for the scheduled backfill.
        if (r.remaining === 0 || r.stalled) break;
      }
      if (job.kind === "full") {
        const { old } = await step.do(
          "switch",
          STEP,
          timed(job.jobId, "switch", () => switchGeneration(this.env, job, target)),
        );
        for (let i = 0; i < MAX_BATCHES; i++) {
          if (
            await step.do(
              `drop ${i}`,
              STEP,
              timed(job.jobId, `drop ${i}`, () => dropGeneration(this.env, job.tenantId, old)),
            )
          )
            break;
        }
      } else {
        await step.do(
          "advance",
          STEP,
          timed(job.jobId, "advance", () => finishIncrementalJob(this.env, job, target.commit)),
        );
      }
      return { commit: target.commit, files };
    } catch (err) {
      // A job that lost its lock (the index was cleared or taken over) just stops.
      if (err instanceof Error && err.message.startsWith(SUPERSEDED)) return { commit: "", files: 0 };
      const message = failureText(err, "code index job");
      await step.do("record failure", () => failJob(this.env, job, message));
      throw err;
    }
  }
}
