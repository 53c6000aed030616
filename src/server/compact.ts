/**
 * Compact mode (`/mcp?mode=compact`): the document store's composite design applied to the whole
 * registry. Three tools — query (every read-only tool is an op), execute (every write tool is an
 * op) and session (the docs session actions) — run on the same pipeline engine as docs_query and
 * docs_execute, and every op runs through callTool, so validation, aliases, idempotency, tenancy
 * and the envelope are the registry's own, never a copy. `describe` gives any op's schemas on demand.
 */
import { z } from "zod";
import { DOCS_SURFACE, DOC_OPS } from "../docs/composite/surface";
import { type NamedOp, opResolver } from "./compact-names";
import { batchResult, batchSummary, executeTool, MAX_OPERATIONS, MAX_STEPS, openResult, queryTool, sessionParamsSchema, sessionTool, stepParamsSchema, stepSchema } from "../core/composite";
import { CANNOT_ASK } from "../core/confirm";
import { defineTool, READ_ONLY, type AnyToolDef } from "../core/define-tool";
import { type ErrorBody, excerpt, notFound, ToolError } from "../core/errors";
import { jsonSchema } from "../core/json-schema";
import { type OpKind, outcome, type PipelineOp, type PipelineSurface, queryText, type RawStep } from "../core/pipeline";
import { unitsOf } from "../core/meter";
import { selectTools } from "./registry";
import { callTool } from "../core/call";
import { toolListing } from "../core/listing";
import type { Surface } from "../core/context";

const WIDEST: Surface = { toolsets: ["all"], readonly: false };

/** The document store's composite tools become their ops (docs_search, docs_add, …) here. */
const DOCS_COMPOSITES = new Set(["docs_query", "docs_execute", "docs_session"]);
const DOCS_PREFIX = "docs_";

interface CompactOp extends NamedOp {
  describe(): Record<string, unknown>;
}

const firstSentence = (text: string) => {
  const end = text.search(/\.(\s|$)/);
  return excerpt(end > 0 ? text.slice(0, end + 1) : text, 160);
};

/** A minimal call of a tool: its required parameters with placeholders of the right type. */
function example(name: string, schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const params: Record<string, unknown> = {};
  for (const key of (schema.required ?? []) as string[]) {
    const p = props[key] ?? {};
    const alt = ((p.anyOf ?? []) as Record<string, unknown>[])[0] ?? p;
    params[key] = Array.isArray(alt.enum)
      ? alt.enum[0]
      : alt.type === "array"
        ? []
        : alt.type === "object"
          ? {}
          : alt.type === "integer" || alt.type === "number"
            ? 1
            : alt.type === "boolean"
              ? true
              : `<${key}>`;
  }
  return { op: name, params };
}

/** A registry tool as an op: the whole registry contract, per step. */
function toolOp(def: AnyToolDef): CompactOp {
  const listing = toolListing(def);
  const kind: OpKind = def.annotations.readOnly || def.queryable ? "query" : "execute";
  return {
    toolset: def.toolset,
    line: firstSentence(def.description),
    seedName: def.seedName,
    queryable: def.queryable,
    pipeline: {
      name: def.name,
      kind,
      units: (params) => unitsOf(def.cost, params),
      invoke: async (ctx, params) => {
        // Nobody is asked inside a batch (a retried round would run the steps before it again):
        // a step that needs a yes carries confirm: true, unless the batch's caller is no MCP client.
        const result = await callTool(def, { ...ctx, confirmer: ctx.confirmer && CANNOT_ASK }, params);
        const sc = (result.structuredContent ?? {}) as Record<string, unknown>;
        if (result.isError) return { ok: false, error: sc.error as ErrorBody };
        // The request's count is the composite call's to report, once.
        const { ok: _ok, rate_limit: _counted, ...data } = sc;
        return { ok: true, data };
      },
    },
    describe: () => ({
      op: def.name,
      toolset: def.toolset,
      kind,
      description: def.description,
      inputSchema: listing.inputSchema,
      outputSchema: listing.outputSchema,
      annotations: listing.annotations,
      examples: [example(def.name, listing.inputSchema as Record<string, unknown>)],
    }),
  };
}

/** The document store's ops, under docs_-prefixed names (registry names such as `search` are taken). */
function docsOps(): CompactOp[] {
  return DOC_OPS.filter((o) => o.name !== "describe").map((o) => {
    const inner = DOCS_SURFACE.find(o.name)!;
    const name = o.category === "session" ? o.name : `${DOCS_PREFIX}${o.name}`;
    const input = jsonSchema(o.params, "input");
    return {
      toolset: "docs",
      line: firstSentence(o.description),
      seedName: o.name,
      pipeline: { name, kind: o.category, invoke: inner.invoke, units: inner.units },
      describe: () => ({
        op: name,
        toolset: "docs",
        kind: o.category,
        description: o.description,
        inputSchema: input,
        annotations: {
          readOnlyHint: o.category === "query",
          destructiveHint: o.category === "execute",
          openWorldHint: o.name === "download" || o.name === "restore" || o.name === "add" || o.name === "watch",
        },
        examples: [example(name, input)],
      }),
    };
  });
}

interface CompactSurface {
  pipeline: PipelineSurface;
  ops: Map<string, CompactOp>;
  tools: AnyToolDef[];
  /** Every op a name could mean on this surface (compact-names.ts). */
  candidates(name: string): NamedOp[];
}

const describeParams = z.object({
  target: z.string().min(1).max(64).optional().describe("The op to describe; omit to list every op by toolset."),
});

function build(surface: Surface): CompactSurface {
  const selected = selectTools(surface);
  const ops = new Map<string, CompactOp>();
  // A tool on every surface (mcp.echo) stays a tool here too, not an op.
  for (const def of selected) if (!DOCS_COMPOSITES.has(def.name) && !def.everywhere) ops.set(def.name, toolOp(def));
  if (selected.some((d) => d.name === "docs_query")) {
    for (const op of docsOps()) if (!surface.readonly || op.pipeline.kind === "query") ops.set(op.pipeline.name, op);
  }
  const present = new Set<string>(selected.map((d) => d.toolset));
  const resolver = opResolver(ops, (name) => ({
    ops: surface.toolsets.includes("all") && !surface.readonly ? [] : compactSurface(WIDEST).candidates(name),
    reach: (o) =>
      present.has(o.toolset) && surface.readonly
        ? `${o.pipeline.name} writes: connect without readonly=1`
        : `Connect with ?mode=compact&toolsets=${o.toolset} (or toolsets=all${surface.readonly && o.pipeline.kind !== "query" ? ", without readonly=1" : ""})`,
  }));
  const names = (kind: OpKind) => [...ops.values()].filter((o) => o.pipeline.kind === kind).map((o) => o.pipeline.name);
  const describe: PipelineOp = {
    name: "describe",
    kind: "query",
    invoke: (_ctx, raw) =>
      outcome(async () => {
        const unknownKeys = Object.keys(raw).filter((k) => k !== "target");
        if (unknownKeys.length > 0) throw new ToolError("invalid_input", `Unknown parameter in params: ${excerpt(unknownKeys[0]!, 40)}.`, { hint: "describe takes only 'target'." });
        const p = describeParams.parse(raw);
        if (p.target === undefined) {
          const byToolset: Record<string, { op: string; kind: OpKind; line: string }[]> = {};
          for (const o of ops.values()) (byToolset[o.toolset] ??= []).push({ op: o.pipeline.name, kind: o.pipeline.kind, line: o.line });
          return { toolsets: byToolset, total_ops: ops.size, hint: 'Describe one op with {"op": "describe", "params": {"target": "<op>"}}.' };
        }
        const found = resolver.resolve(p.target);
        const op = found && ops.get(found.name);
        if (!op) throw notFound("operation", excerpt(p.target, 64), "Describe without a target lists the ops of this surface; ?toolsets=… adds more.");
        return op.describe();
      }),
  };
  const pipeline: PipelineSurface = {
    queryTool: "query",
    executeTool: "execute",
    find: (name, kind) => (name === "describe" ? describe : resolver.resolve(name, kind)),
    names: (kind) => (kind === "query" ? [...names("query"), "describe"] : names(kind)),
  };
  return { pipeline, ops, tools: [...compactTools(pipeline, surface.readonly), ...selected.filter((d) => d.everywhere)], candidates: resolver.candidates };
}

/** One step may be given as the call itself ({op, params}), as docs/protocol.md shows it, or as a list. */
const oneStep = {
  op: z.string().min(1).max(64).optional().describe("One op instead of a list."),
  params: stepParamsSchema.optional().describe("Its params."),
};

function stepsOf(list: readonly RawStep[] | undefined, op: string | undefined, params: Record<string, unknown> | undefined, listName: string): readonly RawStep[] {
  if (list !== undefined && op === undefined && params === undefined) return list;
  if (list === undefined && op !== undefined) return [{ op, params }];
  throw new ToolError("invalid_input", list === undefined ? `Pass '${listName}' or 'op'.` : `Pass '${listName}' or 'op' with 'params', not both.`, {
    hint: `One op: {"op": "describe"}; several: {"${listName}": [{"op": "<op>", "params": {…}}, …]}.`,
  });
}

function compactTools(pipeline: PipelineSurface, readonly: boolean): AnyToolDef[] {
  const query = defineTool({
    name: "query",
    title: "Read",
    description:
      'Run read ops in order; each step sees the previous result as $prev ("$prev.items[0].id"). {"steps":[{"op":"describe"}]} lists every op; {"op":"describe","params":{"target":"task_query"}} gives its schema.',
    toolset: "compact",
    input: z.object({ steps: z.array(stepSchema).min(1).max(MAX_STEPS).optional().describe(`1–${MAX_STEPS} steps, {op, params}.`), ...oneStep }),
    output: openResult,
    listOutput: false,
    annotations: { ...READ_ONLY, openWorld: true },
    cost: "ops",
    run: (ctx, input) => queryTool(ctx, pipeline, stepsOf(input.steps, input.op, input.params, "steps")),
    text: (payload, input) => queryText(payload, input.steps?.length ?? 1),
  });
  const execute = defineTool({
    name: "execute",
    title: "Write",
    description: "Run write ops in order, stopping at the first failure unless continue_on_error; $prev as in query. Describe ops with query.",
    toolset: "compact",
    input: z.object({
      operations: z.array(stepSchema).min(1).max(MAX_OPERATIONS).optional().describe(`1–${MAX_OPERATIONS} operations, {op, params}.`),
      ...oneStep,
      continue_on_error: z.boolean().default(false).describe("Go on after a failure."),
    }),
    output: batchResult,
    errorData: batchResult,
    listOutput: false,
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
    cost: "ops",
    // Each op masks (or not) as its own tool does.
    secrets: "handler",
    // A retried batch replays whole: its ops' own keys could not tell a retry of [create X, comment
    // on X] from a deliberate second round, since the comment is a later write to what create touched.
    idempotency: "derived",
    run: (ctx, input) => executeTool(ctx, pipeline, stepsOf(input.operations, input.op, input.params, "operations"), input.continue_on_error),
    summarize: batchSummary,
  });
  const session = defineTool({
    name: "session",
    title: "Session",
    description: "Document-store sessions: {action: start|stop|pin|unpin|watch, params}.",
    toolset: "compact",
    input: z.object({
      action: z.string().max(64).optional().describe("start, stop, pin, unpin or watch."),
      params: sessionParamsSchema.optional().describe("The action's parameters."),
    }),
    output: openResult,
    listOutput: false,
    annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
    run: (ctx, input) => sessionTool(ctx, pipeline, input.action, input.params),
  });
  // Session actions come with the document store: without it the tool would have nothing to run.
  const withSession = pipeline.names("session").length > 0 ? [session] : [];
  return readonly ? [query] : [query, execute, ...withSession];
}

const built = new Map<string, CompactSurface>();

/** The compact tools for a surface (toolsets and readonly filter the ops as they filter tools); built once per isolate. */
export function compactSurface(surface: Surface): CompactSurface {
  const key = `${[...surface.toolsets].sort().join(",")}|${surface.readonly ? 1 : 0}`;
  let c = built.get(key);
  if (!c) {
    c = build(surface);
    built.set(key, c);
  }
  return c;
}

/** The mode a request asks for: `?mode=compact` or the header `X-MCP-Mode: compact`; `full` (or nothing) is the normal surface. */
export function isCompactMode(query: string | undefined, header: string | undefined): boolean {
  const mode = (query ?? header ?? "").trim().toLowerCase();
  if (mode === "compact") return true;
  if (mode === "" || mode === "full") return false;
  throw new ToolError("invalid_input", `Unknown mode '${excerpt(mode, 40)}'.`, { hint: "Use mode=compact (three composite tools) or mode=full (every tool; the default)." });
}
