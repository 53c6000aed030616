/**
 * The document store's composite tools (seed 003): docs_query (a read pipeline), docs_execute
 * (a write batch), docs_session, and the seed's mcp.echo. They run the ops in ./ops through the
 * shared pipeline engine.
 */
import { z } from "zod";
import { defineTool } from "../mcp/define-tool";
import { boundedJson, MAX_ARG_BYTES } from "../mcp/bounds";
import { type ErrorBody, excerpt, ToolError } from "../mcp/errors";
import { executeSummary, queryText, runExecute, runQuery } from "../mcp/pipeline";
import { DOCS_SURFACE } from "./ops";

export const MAX_STEPS = 20;
export const MAX_OPERATIONS = 50;

const paramsField = boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: MAX_ARG_BYTES, maxDepth: 12 });

const step = boundedJson(
  z.object({
    op: z.string().min(1).max(64).describe("The operation, e.g. 'search'."),
    params: paramsField.optional().describe("The operation's parameters (describe gives each op's schema). A top-level string value \"$prev\", \"$prev.field\", \"$prev.field[N].sub\" takes that value from the previous step's result."),
  })
    // The seed lets a step carry its params at top level ({op: "describe", target: "search"}).
    .catchall(z.unknown()),
  { maxBytes: MAX_ARG_BYTES, maxDepth: 13 },
);

const anything = z.object({}).loose();

const fail = (e: ErrorBody, message = e.message, data?: Record<string, unknown>) => new ToolError(e.code, message, { hint: e.hint, retryable: e.retryable, data });

export const docsQuery = defineTool({
  name: "docs_query",
  title: "Document store: read pipeline",
  description:
    "Read the document store in one call: steps run in order, each seeing the previous result as $prev. Ops: search, grep, list, list_collections, list_snapshots, graph, get, status, describe ({\"op\":\"describe\",\"params\":{\"target\":\"search\"}} gives an op's parameters). One step answers its result directly; several answer {steps, totalSteps, completedSteps}.",
  toolset: "docs",
  input: z.object({
    steps: z.array(step).min(1).max(MAX_STEPS).describe(`1–${MAX_STEPS} steps, each {op, params}.`),
  }),
  output: anything,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  async run(ctx, input) {
    const answer = await runQuery(ctx, DOCS_SURFACE, input.steps);
    let payload: Record<string, unknown>;
    if (answer.kind === "single") {
      if (!answer.outcome.ok) throw fail(answer.outcome.error);
      payload = answer.outcome.data;
    } else {
      const { steps, totalSteps, completedSteps, failedSteps } = answer;
      payload = { steps, totalSteps, completedSteps, failedSteps };
    }
    return payload;
  },
  text: (payload, input) => queryText(payload, input.steps.length),
});

const opResult = z.object({
  stepIndex: z.number().describe("Position of the operation in the batch."),
  op: z.string(),
  success: z.boolean(),
  data: anything.optional().describe("The op's result when it succeeded."),
  error: z.object({ code: z.string(), message: z.string(), hint: z.string(), retryable: z.boolean() }).optional().describe("Why it failed."),
});

const executeFailure = z.object({
  results: z.array(opResult).describe("Per-op results, in order, up to the failure that stopped the batch."),
  totalOps: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  skipped: z.number().describe("Ops not run because an earlier one failed."),
});

export const docsExecute = defineTool({
  name: "docs_execute",
  title: "Document store: write batch",
  description:
    "Write to the document store: operations run in order and the batch stops at the first failure unless continue_on_error. Ops: add (inline content), update (metadata, tags), delete (names, globs), restore, download. Answers {results: [{stepIndex, op, success, data | error}], totalOps, succeeded, failed}.",
  toolset: "docs",
  input: z.object({
    operations: z.array(step).min(1).max(MAX_OPERATIONS).describe(`1–${MAX_OPERATIONS} operations, each {op, params}.`),
    continue_on_error: z.boolean().default(false).describe("Run every operation even after one fails (continueOnError is accepted)."),
  }),
  output: executeFailure,
  errorData: executeFailure,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  // Documents are stored byte for byte; the add op warns about secret-shaped content instead.
  secrets: "handler",
  async run(ctx, input) {
    const answer = await runExecute(ctx, DOCS_SURFACE, input.operations, input.continue_on_error);
    const { results, totalOps, succeeded, failed, skipped } = answer;
    if (answer.firstError) throw fail(answer.firstError, executeSummary(answer), { results, totalOps, succeeded, failed, skipped });
    return { results, totalOps, succeeded, failed, skipped };
  },
  summarize: (r) => `Execute: ${r.succeeded} succeeded, ${r.failed} failed out of ${r.totalOps} operations`,
});

export const docsSession = defineTool({
  name: "docs_session",
  title: "Document store: session",
  description:
    "Scope your document-store work: start a named session, pin documents to it by path glob or hash (list and search then stay within the pins), unpin, stop, and watch a GitHub path so pushes re-import it. {action, params}; actions: start, stop, pin, unpin, watch.",
  toolset: "docs",
  input: z.object({
    action: z.string().max(64).optional().describe("start, stop, pin, unpin or watch."),
    params: boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: 64 * 1024, maxDepth: 8 })
      .optional()
      .describe("The action's parameters (describe with target 'session_<action>' gives them)."),
  }),
  output: anything,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  async run(ctx, input) {
    const actions = DOCS_SURFACE.names("session").join(", ");
    if (typeof input.action !== "string" || input.action === "") {
      throw new ToolError("invalid_input", "'action' string is required", { hint: `Pass {"action": "start", "params": {"name": "review"}}; actions: ${actions}.` });
    }
    const op = DOCS_SURFACE.find(input.action);
    if (!op || op.kind !== "session") {
      throw new ToolError("invalid_input", `Unknown session action '${excerpt(input.action, 64)}'. Valid actions: ${actions}`, {
        hint: "Reads and writes go through docs_query and docs_execute; docs_session only manages sessions.",
      });
    }
    const o = await op.invoke(ctx, input.params ?? {}, 0);
    if (!o.ok) throw fail(o.error);
    return o.data;
  },
  summarize: () => "Session",
});

export const mcpEcho = defineTool({
  name: "mcp.echo",
  title: "Echo",
  description: "Echoes back the message: a protocol check that touches nothing.",
  toolset: "docs",
  input: z.object({ message: z.string().max(10_000).describe("Text to echo back.") }),
  output: z.object({ message: z.string().describe("The same text.") }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  async run(_ctx, input) {
    return { message: input.message };
  },
  summarize: (r) => r.message,
});

export const docsTools = [docsQuery, docsExecute, docsSession, mcpEcho];
