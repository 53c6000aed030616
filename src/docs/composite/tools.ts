/**
 * The document store's composite tools (seed 003): docs_query (a read pipeline), docs_execute
 * (a write batch), docs_session, and the seed's mcp.echo. They run the ops in ./ops through the
 * shared pipeline engine.
 */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { batchResult, batchSummary, executeTool, MAX_OPERATIONS, MAX_STEPS, namedField, openResult, queryTool, sessionParamsSchema, sessionTool, stepSchemaOf } from "../../core/composite";
import { queryText } from "../../core/pipeline";
import { DOCS_SURFACE } from "./surface";

export const docsQuery = defineTool({
  name: "docs_query",
  seedName: "query",
  title: "Document store: read pipeline",
  description:
    "Read the document store in one call: steps run in order, each seeing the previous result as $prev. Ops: search, grep, list, list_collections, list_snapshots, graph, get, status, describe (docs_query {\"steps\": [{\"op\": \"describe\", \"params\": {\"target\": \"search\"}}]} gives an op's parameters). One step answers its result directly; several answer {steps, totalSteps, completedSteps}.",
  toolset: "docs",
  input: z.object({
    steps: z.array(stepSchemaOf(DOCS_SURFACE.names("query"))).min(1).max(MAX_STEPS).describe(`1–${MAX_STEPS} steps, each {op, params}.`),
  }),
  output: openResult,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  cost: "ops",
  run: (ctx, input) => queryTool(ctx, DOCS_SURFACE, input.steps),
  text: (payload, input) => queryText(payload, input.steps.length),
});

export const docsExecute = defineTool({
  name: "docs_execute",
  seedName: "execute",
  title: "Document store: write batch",
  description:
    "Write to the document store: operations run in order and the batch stops at the first failure unless continue_on_error. Ops: add (inline content), update (metadata, tags), delete (names, globs), restore, download. Answers {results: [{stepIndex, op, success, the op's scalar fields (add's hash, update's matched), data | error}], totalOps, succeeded, failed}.",
  toolset: "docs",
  input: z.object({
    operations: z.array(stepSchemaOf(DOCS_SURFACE.names("execute"))).min(1).max(MAX_OPERATIONS).describe(`1–${MAX_OPERATIONS} operations, each {op, params}.`),
    continue_on_error: z.boolean().default(false).describe("Run every operation even after one fails (continueOnError is accepted)."),
  }),
  output: batchResult,
  errorData: batchResult,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  cost: "ops",
  // Documents are stored byte for byte; the add op warns about secret-shaped content instead.
  secrets: "handler",
  run: (ctx, input) => executeTool(ctx, DOCS_SURFACE, input.operations, input.continue_on_error),
  summarize: batchSummary,
});

export const docsSession = defineTool({
  name: "docs_session",
  seedName: "session",
  title: "Document store: session",
  description:
    "Scope your document-store work: start a named session, pin documents to it by path glob or hash (list and search then stay within the pins), unpin, stop, and watch a GitHub path so pushes re-import it. {action, params}; actions: start, stop, pin, unpin, watch.",
  toolset: "docs",
  input: z.object({
    action: namedField("start, stop, pin, unpin or watch.", DOCS_SURFACE.names("session")).optional(),
    params: sessionParamsSchema.optional().describe("The action's parameters (describe with target 'session_<action>' gives them)."),
  }),
  output: openResult,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  run: (ctx, input) => sessionTool(ctx, DOCS_SURFACE, input.action, input.params),
  summarize: () => "Session",
});

export const mcpEcho = defineTool({
  name: "mcp.echo",
  title: "Echo",
  description: "Echoes the message back (a protocol check).",
  toolset: "docs",
  everywhere: true,
  // On every surface, so it costs each listing as little as it can: the answer is the message.
  listOutput: false,
  input: z.object({ message: z.string().max(10_000).describe("Text to echo back.") }),
  output: z.object({ message: z.string().describe("The same text.") }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  async run(_ctx, input) {
    return { message: input.message };
  },
  summarize: (r) => r.message,
});

export const docsTools = [docsQuery, docsExecute, docsSession, mcpEcho];
