/**
 * An index job as a Cloudflare Workflow: every bounded step of src/code/indexer.ts is one durable
 * step, so a failure retries only its own step and a restarted instance skips what is done. The
 * instance id is the job id, and the index row's lock (code_indexes.job_id) keeps one job per
 * repository and ref.
 */
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import type { Env } from "../env";
import { commitsStep, dropGeneration, embedBatch, failJob, fetchFiles, parseBatch, resolveTarget, SUPERSEDED, switchGeneration, type IndexJob } from "./indexer";
import { applyIncremental, finishIncrementalJob } from "./incremental";

const STEP: WorkflowStepConfig = { retries: { limit: 4, delay: "2 seconds", backoff: "exponential" }, timeout: "5 minutes" };
/** More batches than any repository within the limits needs; a loop past it is a bug, not work. */
const MAX_BATCHES = 2_000;

export class CodeIndexWorkflow extends WorkflowEntrypoint<Env, IndexJob> {
  override async run(event: Readonly<WorkflowEvent<IndexJob>>, step: WorkflowStep): Promise<{ commit: string; files: number }> {
    const job = event.payload;
    try {
      const target = await step.do("resolve", STEP, () => resolveTarget(this.env, job));
      let files: number;
      if (job.kind === "incremental") {
        files = (await step.do("fetch changed", STEP, () => applyIncremental(this.env, job, target))).files;
      } else {
        files = (await step.do("fetch", STEP, () => fetchFiles(this.env, job, target))).files;
        await step.do("commits", STEP, () => commitsStep(this.env, job));
      }
      for (let i = 0; i < MAX_BATCHES; i++) {
        const r = await step.do(`parse ${i}`, STEP, () => parseBatch(this.env, job, target));
        if (r.remaining === 0) break;
      }
      for (let i = 0; i < MAX_BATCHES; i++) {
        const r = await step.do(`embed ${i}`, STEP, () => embedBatch(this.env, job, target));
        // Chunks whose embedding keeps failing stay pending for the scheduled backfill.
        if (r.remaining === 0 || r.stalled) break;
      }
      if (job.kind === "full") {
        const { old } = await step.do("switch", STEP, () => switchGeneration(this.env, job, target));
        for (let i = 0; i < MAX_BATCHES; i++) {
          if (await step.do(`drop ${i}`, STEP, () => dropGeneration(this.env, job.tenantId, old))) break;
        }
      } else {
        await step.do("advance", STEP, () => finishIncrementalJob(this.env, job, target.commit));
      }
      return { commit: target.commit, files };
    } catch (err) {
      // A job that lost its lock (the index was cleared or taken over) just stops.
      if (err instanceof Error && err.message.startsWith(SUPERSEDED)) return { commit: "", files: 0 };
      const message = err instanceof Error ? err.message : String(err);
      await step.do("record failure", () => failJob(this.env, job, message));
      throw err;
    }
  }
}
