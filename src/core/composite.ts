/**
 * What every composite tool shares, whichever surface it serves (the document store's docs_query,
 * docs_execute and docs_session; compact mode's query, execute and session): the step schema, the
 * batch result, and running a call on the pipeline engine into the registry's envelope.
 */
import { z } from "zod";
import type { Ctx } from "./context";
import { boundedJson, MAX_ARG_BYTES } from "./bounds";
import { type ErrorBody, excerpt, ToolError } from "./errors";
import { executeSummary, type PipelineSurface, type RawStep, runExecute, runQuery } from "./pipeline";

export const MAX_STEPS = 20;
export const MAX_OPERATIONS = 50;

/** A step's params; a top-level "$prev…" string is a reference to the previous result. */
export const stepParamsSchema = boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: MAX_ARG_BYTES, maxDepth: 12 });

/**
 * A name field whose listing shows its allowed values as an enum, as seed 003's schemas do, while
 * any string passes validation: a name outside them gets the seed's own refusal ("'add' is not a
 * read operation. Use the 'execute' tool …"), which a schema error could not give.
 */
export const namedField = (description: string, names?: readonly string[]) =>
  z
    .string()
    .max(64)
    .meta(names ? { description, enum: [...names] } : { description });

/** A step of a composite call; `ops` lists the op names its tool runs, for the listing. */
export const stepSchemaOf = (ops?: readonly string[]) =>
  boundedJson(
    z
      .object({
        op: namedField("The operation (describe lists them).", ops),
        params: stepParamsSchema.optional().describe('The op\'s parameters. A top-level string "$prev", "$prev.field" or "$prev.field[N].sub" takes that value from the previous step\'s result.'),
      })
      // The seed lets a step carry its params at top level ({op: "describe", target: "search"}).
      .catchall(z.unknown()),
    { maxBytes: MAX_ARG_BYTES, maxDepth: 13 },
  );

export const stepSchema = stepSchemaOf();

export const sessionParamsSchema = boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: 64 * 1024, maxDepth: 8 });

/** A result that is whatever the op answered. */
export const openResult = z.object({}).loose();

const opResult = z
  .object({
    stepIndex: z.number().describe("Position of the operation in the batch."),
    op: z.string(),
    success: z.boolean(),
    data: openResult.optional().describe("The op's result when it succeeded."),
    error: z.object({ code: z.string(), message: z.string(), hint: z.string(), retryable: z.boolean() }).optional().describe("Why it failed."),
  })
  // The document store also puts the op's scalar fields here, as seed 003's example does (hash, matched).
  .catchall(z.union([z.string(), z.number(), z.boolean(), z.null()]));

/** A write batch's answer, and what a failed batch carries beside its error. */
export const batchResult = z.object({
  results: z.array(opResult).describe("Per-op results, in order, up to the failure that stopped the batch."),
  totalOps: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  skipped: z.number().describe("Ops not run because an earlier one failed."),
});

const failure = (e: ErrorBody, message = e.message, data?: Record<string, unknown>) => new ToolError(e.code, message, { hint: e.hint, retryable: e.retryable, data });

/** A read pipeline as a tool answers it: one step unwrapped (its failure is the call's), several wrapped. */
export async function queryTool(ctx: Ctx, surface: PipelineSurface, steps: readonly RawStep[]): Promise<Record<string, unknown>> {
  const answer = await runQuery(ctx, surface, steps);
  if (answer.kind === "single") {
    if (!answer.outcome.ok) throw failure(answer.outcome.error);
    return answer.outcome.data;
  }
  const { steps: done, totalSteps, completedSteps, failedSteps } = answer;
  return { steps: done, totalSteps, completedSteps, failedSteps };
}

/** A write batch as a tool answers it: any failure makes the call an error carrying the per-op results. */
export async function executeTool(ctx: Ctx, surface: PipelineSurface, operations: readonly RawStep[], continueOnError: boolean): Promise<z.input<typeof batchResult>> {
  const answer = await runExecute(ctx, surface, operations, continueOnError);
  const { totalOps, succeeded, failed, skipped } = answer;
  // The items' extra fields are the ops' scalars (pipeline.ts headline), which the schema's catchall admits.
  const results = answer.results as z.input<typeof batchResult>["results"];
  if (answer.firstError) throw failure(answer.firstError, executeSummary(answer), { results, totalOps, succeeded, failed, skipped });
  return { results, totalOps, succeeded, failed, skipped };
}

export const batchSummary = (r: { succeeded: number; failed: number; totalOps: number }) => `Execute: ${r.succeeded} succeeded, ${r.failed} failed out of ${r.totalOps} operations`;

/** One session action, with the seed's error texts for a missing or unknown action. */
export async function sessionTool(ctx: Ctx, surface: PipelineSurface, action: string | undefined, params: Record<string, unknown> | undefined): Promise<Record<string, unknown>> {
  const actions = surface.names("session");
  const listed = actions.join(", ");
  if (typeof action !== "string" || action === "") {
    throw new ToolError("invalid_input", "'action' string is required", {
      hint: actions.length > 0 ? `Pass {"action": "start", "params": {"name": "review"}}; actions: ${listed}.` : "Session actions come with the docs toolset: add ?toolsets=docs.",
    });
  }
  const op = surface.find(action);
  if (!op || op.kind !== "session") {
    const valid = actions.length > 0 ? `Valid actions: ${listed}` : "This surface has no session actions.";
    throw new ToolError("invalid_input", `Unknown session action '${excerpt(action, 64)}'. ${valid}`, {
      hint: actions.length > 0 ? "Reads and writes go through the query and execute tools; the session tool only manages sessions." : "Session actions come with the docs toolset: add ?toolsets=docs.",
    });
  }
  const o = await op.invoke(ctx, params ?? {}, 0);
  if (!o.ok) throw failure(o.error);
  return o.data;
}
