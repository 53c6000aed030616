/** docs_query (the seed's `query`): the document store's read pipeline over the query ops (./surface). */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { MAX_STEPS, openResult, queryTool, stepSchemaOf } from "../../core/composite";
import { queryText } from "../../core/pipeline";
import { DOCS_SURFACE } from "./surface";

export const docsQuery = defineTool({
  name: "docs_query",
  seedName: "query",
  title: "Document store: read pipeline",
  description:
    'Read the document store in one call: steps run in order, each seeing the previous result as $prev. Ops: search, grep, list, list_collections, list_snapshots, graph, get, status, describe (docs_query {"steps": [{"op": "describe", "params": {"target": "search"}}]} gives an op\'s parameters). One step answers its result directly; several answer {steps, totalSteps, completedSteps}.',
  toolset: "docs",
  input: z.object({
    steps: z
      .array(stepSchemaOf(DOCS_SURFACE.names("query")))
      .min(1)
      .max(MAX_STEPS)
      .describe(`1–${MAX_STEPS} steps, each {op, params}.`),
  }),
  output: openResult,
  annotations: READ_ONLY,
  cost: "ops",
  run: (ctx, input) => queryTool(ctx, DOCS_SURFACE, input.steps),
  text: (payload, input) => queryText(payload, input.steps.length),
});
