/** docs_execute (the seed's `execute`): the document store's write batch over the execute ops (./surface). */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { batchResult, batchSummary, executeTool, MAX_OPERATIONS, stepSchemaOf } from "../../core/composite";
import { DOCS_SURFACE } from "./surface";

/** A batch with a GitHub import or a URL download: the long kind of write. */
function fetchesFromElsewhere(args: Record<string, unknown>): boolean {
  const ops = Array.isArray(args.operations) ? (args.operations as { op?: unknown; params?: { repo?: unknown } }[]) : [];
  return ops.some((o) => o?.op === "download" || (o?.op === "add" && o.params?.repo !== undefined));
}

export const docsExecute = defineTool({
  name: "docs_execute",
  seedName: "execute",
  title: "Document store: write batch",
  description:
    "Write to the document store: operations run in order and the batch stops at the first failure unless continue_on_error. Ops: add (inline content), update (metadata, tags), delete (names, globs), restore, download. Answers {results: [{stepIndex, op, success, the op's scalar fields (add's hash, update's matched), data | error}], totalOps, succeeded, failed}.",
  toolset: "docs",
  input: z.object({
    operations: z
      .array(stepSchemaOf(DOCS_SURFACE.names("execute")))
      .min(1)
      .max(MAX_OPERATIONS)
      .describe(`1–${MAX_OPERATIONS} operations, each {op, params}.`),
    continue_on_error: z.boolean().default(false).describe("Run every operation even after one fails (continueOnError is accepted)."),
  }),
  output: batchResult,
  errorData: batchResult,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  cost: "ops",
  // Documents are stored byte for byte; the add op warns about secret-shaped content instead.
  secrets: "handler",
  // Imports (add with repo) and downloads fetch from elsewhere, up to hundreds of files: to a client that declares the tasks extension they are a task to poll.
  task: { background: true, pollMs: 3000, when: fetchesFromElsewhere },
  run: (ctx, input) => executeTool(ctx, DOCS_SURFACE, input.operations, input.continue_on_error),
  summarize: batchSummary,
});
