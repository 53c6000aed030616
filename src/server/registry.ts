import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import { changeTools } from "../changes/tools";
import { identityTools } from "../work/identity";
import { projectTools } from "../work/projects";
import { taskTools } from "../work/tasks";
import { attachmentTools } from "../work/attachments";
import { collabTools } from "../work/collab";
import { decisionTools } from "../work/decisions";
import { feedbackTools } from "../work/feedback";
import { handoffTools } from "../work/handoffs";
import { knowledgeTools } from "../work/knowledge";
import { repoTools } from "../work/repos";
import { gitTools } from "../git/tools";
import { docsTools } from "../docs/tools";
import { codeTools } from "../code/tools";
import { reviewTools } from "../review/tools";
import { planTools } from "../plans/tools";
import { searchTools } from "../work/search";
import { runTools } from "../work/runs";
import { skillTools } from "../work/skills";
import type { Ctx } from "../core/context";
import type { AnyToolDef, ToolsetId, ToolsetMeta } from "../core/define-tool";
import { checkArgShape } from "../core/bounds";
import { confirmField, InputNeeded } from "../core/confirm";
import { jsonSchema } from "../core/json-schema";
import { type ErrorBody, invalidInput, toErrorBody, ToolError } from "../core/errors";
import { derivedKey, runIdempotent } from "../core/idempotency";
import { normalizeArgs, parseArgs } from "../core/inputs";
import { maskSecrets } from "../core/secrets";
import { rateLimitField, unitsOf } from "../core/meter";
import { checkFields, fieldsField, itemSchema, project } from "../core/fields";
import { capResponse, MAX_RESPONSE_CHARS, truncationField } from "../core/response-cap";
import { manifestTool } from "./manifest";
import { withSeed004Errors } from "./seed004-errors";

// The default surface stays under the smallest client tool cap we know of (Cursor, 40 tools):
// collab, repos, feedback, skills and runs are opt-in with ?toolsets=… or "all".
export const TOOLSETS: readonly ToolsetMeta[] = [
  {
    id: "changes",
    description: "Change ledger: record what changed and why; blame, history, search, prior attempts, stale decisions.",
    default: true,
  },
  { id: "identity", description: "Who you are and the actor directory: whoami, register_actor, actor_query.", default: true },
  { id: "projects", description: "Projects: create, update, query, and the one-call project brief.", default: true },
  { id: "tasks", description: "Tasks: a dependency graph with a validated state machine, done-gates, and leased claims.", default: true },
  { id: "decisions", description: "Decisions: an append-only log with supersede, status moves and search.", default: true },
  { id: "handoffs", description: "Handoffs between actors (questions, reviews, approvals) and your inbox.", default: true },
  { id: "knowledge", description: "Knowledge notes (notes, runbooks, findings, snippets) with semantic search.", default: true },
  { id: "search", description: "One keyword search across projects, tasks, decisions, notes, comments, handoffs and change events.", default: true },
  { id: "repos", description: "Repositories linked to projects, and the code refs (commits, PRs) that deliver work.", default: false },
  { id: "feedback", description: "File bugs, friction and missing capabilities in this server, and read their outcome.", default: false },
  { id: "skills", description: "Skills: versioned markdown playbooks by slug, tenant-wide or per project.", default: false },
  { id: "collab", description: "Comments with mentions, attachments (links and files), the activity log, and your notifications.", default: false },
  { id: "git", description: "Git on GitHub: status, inventory, parity, log, diff summaries, multi-file commits, merges and cherry-picks through the GitHub API.", default: false },
  { id: "docs", description: "Document store: content-addressed documents with search, grep, a knowledge graph, collections and snapshots, behind three composite tools (docs_query, docs_execute, docs_session).", default: false },
  { id: "code", description: "Code context over the team's GitHub repositories: indexing on the platform's workflows, semantic and keyword code search, files, symbols and context for a prompt.", default: false },
  { id: "review", description: "Code review on GitHub: the deterministic review_diff preflight with SARIF, YAML invariants, secret scrubbing, LLM reviews of diffs and pull requests, GitHub's own check results, and reactive pull-request review sessions.", default: false },
  { id: "plans", description: "Plans: write (create_plan, save_plan), refine, approve through the inbox, turn into tasks, track step by step, visualize and execute implementation plans; every version kept, compared and rolled back.", default: false },
  { id: "runs", description: "Runs: the tree of sessions and subagents your writes are attributed to; fork, heartbeat, end, query, summarize.", default: false },
];

/** Seed 004's tool_manifest reads the registry it is part of, at call time. */
const toolManifest = manifestTool({ toolsets: TOOLSETS, select: (surface) => selectTools(surface), listing: (def) => listedTool(def, "lean") });

/** Every tool the server has, grouped by toolset. */
export const ALL_TOOLS: readonly AnyToolDef[] = [...changeTools, ...identityTools, ...projectTools, ...taskTools, ...decisionTools, ...handoffTools, ...knowledgeTools, ...collabTools, ...attachmentTools, ...repoTools, ...feedbackTools, ...skillTools, ...searchTools, ...runTools, ...gitTools, ...docsTools, ...withSeed004Errors([...codeTools, toolManifest, ...reviewTools, ...planTools])];

const TOOLS_BY_NAME = new Map(ALL_TOOLS.map((t) => [t.name, t]));

export const findTool = (name: string): AnyToolDef | undefined => TOOLS_BY_NAME.get(name);

const TOOLS_BY_SEED_NAME = new Map(ALL_TOOLS.filter((t) => t.seedName).map((t) => [t.seedName!, t]));

/** The tool a seed's name means when no tool has that name (seed 003's `query` is docs_query). */
export const findBySeedName = (name: string): AnyToolDef | undefined => (TOOLS_BY_NAME.has(name) ? undefined : TOOLS_BY_SEED_NAME.get(name));

export interface Surface {
  /** Toolset ids, or `all`; empty means the default toolsets. */
  toolsets: readonly string[];
  readonly: boolean;
}

/** The tools a surface exposes. Unknown toolset names are an error the route reports. */
export function selectTools(surface: Surface): AnyToolDef[] {
  const known = new Set<string>(TOOLSETS.map((t) => t.id));
  const unknown = surface.toolsets.filter((t) => t !== "all" && t !== "default" && !known.has(t));
  if (unknown.length > 0) {
    throw invalidInput(
      `Unknown toolset${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`,
      `Known toolsets: ${[...known].join(", ")}, or "all".`,
    );
  }
  const wanted = new Set<ToolsetId>();
  const asked = surface.toolsets.length > 0 ? surface.toolsets : ["default"];
  for (const name of asked) {
    for (const t of TOOLSETS) {
      if (name === "all" || name === t.id || (name === "default" && t.default)) wanted.add(t.id);
    }
  }
  return ALL_TOOLS.filter((t) => t.everywhere || (wanted.has(t.toolset) && (!surface.readonly || t.annotations.readOnly)));
}

/** The work ledger's toolsets (seed 001): beside any of them, short names such as `search` or `history` would be ambiguous. */
const WORK_LEDGER_TOOLSETS: ReadonlySet<ToolsetId> = new Set([
  "identity", "projects", "tasks", "decisions", "handoffs", "knowledge", "search", "repos", "feedback", "skills", "collab", "runs",
]);

/** How a surface names its tools: the name each is listed under, and the tool a tools/call name means. */
export interface SurfaceNaming {
  listedName(def: AnyToolDef): string;
  resolve(name: string): AnyToolDef | undefined;
}

/**
 * Seed 000 calls its tools `diff`, `history` and `search`, seed 003 its composites `query`,
 * `execute` and `session`; next to the work ledger those names would be ambiguous (and `search` is
 * taken), so there they are listed as change_diff, docs_query, … . A
 * surface without the work ledger lists the seed's names. Either way a tool keeps one definition:
 * its canonical name always answers, and its seed name answers wherever no listed tool has it.
 */
export function surfaceNaming(tools: readonly AnyToolDef[]): SurfaceNaming {
  const seedNames = !tools.some((t) => WORK_LEDGER_TOOLSETS.has(t.toolset));
  const listedName = (def: AnyToolDef) => (seedNames && def.seedName ? def.seedName : def.name);
  const byName = new Map<string, AnyToolDef>();
  for (const t of tools) byName.set(listedName(t), t);
  for (const t of tools) if (!byName.has(t.name)) byName.set(t.name, t);
  for (const t of tools) if (t.seedName && !byName.has(t.seedName)) byName.set(t.seedName, t);
  return { listedName, resolve: (name) => byName.get(name) };
}

const idempotencyKeyField = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("Retry key (24 h): replays the first result.");

const allowSecretsField = z
  .boolean()
  .optional()
  .describe("Keep secrets unmasked.");

const warningsField = z.array(z.string()).optional().describe("Things worth a second look, e.g. secret-shaped text that was masked.");

/** Whether a JSON Schema has free text somewhere: a string longer than an identifier, or free-form JSON. */
function hasFreeText(s: Record<string, unknown>): boolean {
  if (s.type === "string" && !s.enum && !s.pattern && typeof s.maxLength === "number" && s.maxLength > 100) return true;
  if (s["x-max-bytes"] !== undefined) return true;
  const children = [
    ...Object.values((s.properties ?? {}) as Record<string, Record<string, unknown>>),
    ...(s.items ? [s.items as Record<string, unknown>] : []),
    ...((s.anyOf ?? []) as Record<string, unknown>[]),
  ];
  return children.some(hasFreeText);
}

const masking = new WeakMap<AnyToolDef, boolean>();

/**
 * A write whose text the registry masks: it stores what it is given here (not read-only, not
 * open-world), it takes free text, and the tool has not opted out.
 */
function masksSecrets(def: AnyToolDef): boolean {
  let m = masking.get(def);
  if (m === undefined) {
    m = !def.annotations.readOnly && !def.annotations.openWorld && def.secrets !== "handler" && hasFreeText(jsonSchema(def.input, "input"));
    masking.set(def, m);
  }
  return m;
}

const errorEnvelope = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.string().describe("Stable machine-readable error code."),
    message: z.string().describe("What went wrong."),
    hint: z.string().describe("How to recover."),
    retryable: z.boolean().describe("Whether the same call may succeed if retried unchanged."),
  }),
});

interface Compiled {
  input: z.ZodObject;
  listing: Tool;
}

const compiled = new WeakMap<AnyToolDef, Compiled>();


/** The input schema as advertised and enforced: strict, plus `idempotency_key` on writes. */
function compile(def: AnyToolDef): Compiled {
  let c = compiled.get(def);
  if (c) return c;
  const writeFields = def.annotations.readOnly ? {} : { idempotency_key: idempotencyKeyField };
  const input = def.input
    .extend({
      ...(def.fields ? { fields: fieldsField } : {}),
      ...writeFields,
      ...(masksSecrets(def) ? { allow_secrets: allowSecretsField } : {}),
      ...(def.confirms ? { confirm: confirmField } : {}),
    })
    .strict();
  // An open output (a composite tool answers whatever its op answers) stays open in the listing.
  const catchall = (def.output._zod.def as { catchall?: z.ZodType }).catchall;
  // With fields, an item carries only the keys asked for.
  const shape = def.fields ? { ...def.output.shape, items: z.array(itemSchema(def).partial()) } : def.output.shape;
  const base = z.object({ ok: z.literal(true) }).extend(shape);
  const success = (catchall ? base.catchall(catchall) : base)
    .extend(def.annotations.readOnly ? {} : { idempotent_replay: z.boolean().optional() })
    .extend(masksSecrets(def) && !("warnings" in def.output.shape) ? { warnings: warningsField } : {})
    .extend({ truncation: truncationField })
    .extend(def.cost ? { rate_limit: rateLimitField } : {});
  const failure = (def.errorData ? errorEnvelope.extend(def.errorData.partial().shape) : errorEnvelope).extend(def.cost ? { rate_limit: rateLimitField } : {});
  c = {
    input,
    listing: {
      name: def.name,
      title: def.title,
      description: def.description,
      inputSchema: jsonSchema(input, "input") as Tool["inputSchema"],
      ...(def.listOutput === false
        ? {}
        : {
            outputSchema: {
              type: "object",
              anyOf: [jsonSchema(success, "output"), jsonSchema(failure, "output")],
            } as Tool["outputSchema"],
          }),
      // The title is the listing's own `title` (MCP 2025-06-18 on); annotations.title would repeat it.
      annotations: {
        readOnlyHint: def.annotations.readOnly,
        destructiveHint: def.annotations.destructive,
        idempotentHint: def.annotations.idempotent,
        openWorldHint: def.annotations.openWorld,
      },
    },
  };
  compiled.set(def, c);
  return c;
}

export const toolListing = (def: AnyToolDef): Tool => compile(def).listing;

/**
 * What a tools/list costs an agent's context. `lean` (the default) lists a tool's output schema
 * only when it is small, and leaves size bounds (string lengths, list lengths, JSON byte caps),
 * `additionalProperties: false` and descriptions a branch repeats from its parent out of the input
 * schema. `full` lists everything.
 * The server validates inputs and results against the full schemas either way, and a bound it
 * enforces is named in its invalid_input error.
 */
export type SchemaListing = "full" | "lean";
export const SMALL_OUTPUT_SCHEMA_CHARS = 600;

const LEAN_DROPPED = new Set(["minLength", "maxLength", "maxItems", "x-max-bytes", "x-max-depth", "x-brief"]);
/** Inside a briefed schema, the values and bounds the tool it repeats lists (and the server enforces) go too. */
const BRIEF_DROPPED = new Set(["default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "minItems"]);

interface LeanContext {
  /** The description of the schema whose anyOf/oneOf this is: a branch repeating it is left out. */
  parentDescription?: string;
  /**
   * An input schema lists a schema marked x-brief (it repeats another tool's arguments) by its
   * structure, every name, type, enum and required list kept and the words left to the tool its
   * description names; an output schema by that description alone.
   */
  io: "input" | "output";
  /** Inside a briefed schema: descriptions are left out. */
  inBrief?: boolean;
}

/** A JSON Schema without what the lean listing leaves out. */
export function leanSchema(schema: unknown, parentDescription?: string, io: "input" | "output" = "input"): unknown {
  return lean_(schema, { parentDescription, io });
}

function lean_(schema: unknown, lc: LeanContext): unknown {
  if (Array.isArray(schema)) return schema.map((s) => lean_(s, lc));
  if (!schema || typeof schema !== "object") return schema;
  const src = schema as Record<string, unknown>;
  const inner: LeanContext = { io: lc.io, inBrief: lc.inBrief };
  if (src["x-brief"] === true) {
    if (lc.io === "output") return { type: src.type, description: src.description };
    inner.inBrief = true;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (LEAN_DROPPED.has(k) || (inner.inBrief && BRIEF_DROPPED.has(k))) continue;
    // Strict inputs are enforced, and an unknown key is refused naming the allowed ones: the listing need not say it on every object.
    if (k === "additionalProperties" && v === false && lc.io === "input") continue;
    if (k === "description") {
      // A nullable parameter's branches repeat the parameter's own description; a briefed schema's parts repeat another tool's.
      const repeated = lc.parentDescription !== undefined && typeof v === "string" && lc.parentDescription.includes(v);
      if (repeated || (lc.inBrief && src["x-brief"] !== true)) continue;
    }
    if (k === "properties") {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, p]) => [name, lean_(p, inner)]));
    } else if (k === "anyOf" || k === "oneOf") {
      out[k] = lean_(v, { ...inner, parentDescription: typeof src.description === "string" ? src.description : undefined });
    } else {
      out[k] = typeof v === "object" ? lean_(v, inner) : v;
    }
  }
  return out;
}

const LEAN_FAILURE = { type: "object", properties: { ok: { const: false }, error: { type: "object" } }, required: ["ok", "error"] };

const lean = new WeakMap<AnyToolDef, Tool>();

export function listedTool(def: AnyToolDef, listing: SchemaListing): Tool {
  const full = toolListing(def);
  if (listing === "full") return full;
  let t = lean.get(def);
  if (!t) {
    const { outputSchema, inputSchema, ...rest } = full;
    t = { ...rest, inputSchema: leanSchema(inputSchema) as Tool["inputSchema"] };
    if (outputSchema !== undefined) {
      // The failure branch is the same envelope on every tool (the guide describes it): in brief.
      const [success] = outputSchema.anyOf as unknown[];
      const brief = { type: "object", anyOf: [leanSchema(success, undefined, "output"), LEAN_FAILURE] };
      if (JSON.stringify(brief).length <= SMALL_OUTPUT_SCHEMA_CHARS) t.outputSchema = brief as Tool["outputSchema"];
    }
    lean.set(def, t);
  }
  return t;
}

function render(structured: Record<string, unknown>, summary: string): CallToolResult {
  const json = JSON.stringify(structured);
  return {
    content: [{ type: "text", text: summary ? `${summary}\n${json}` : json }],
    structuredContent: structured,
  };
}

/**
 * A write inside a session is attributed to the session's run, minted on its first write;
 * reads never mint one. Inside the idempotent section, so a replayed write touches no run.
 */
async function attributed(def: AnyToolDef, ctx: Ctx): Promise<Ctx> {
  if (def.annotations.readOnly || !ctx.ensureRun) return ctx;
  return { ...ctx, runId: await ctx.ensureRun() };
}

/**
 * Charges what this call costs beyond what was already paid for it (docs/limits.md: Rate limits), before
 * anything of it runs, and returns the ctx its handler runs with: tools the handler runs in turn
 * are charged only for work beyond what this call paid.
 */
async function pay(def: AnyToolDef, ctx: Ctx, args: Record<string, unknown>): Promise<Ctx> {
  const units = unitsOf(def.cost, args);
  const paid = ctx.paid ?? 1;
  if (units > paid) await ctx.meter?.charge(units - paid, { what: def.name, units });
  return { ...ctx, paid: Math.max(units, paid) };
}

/** A costed tool's answer says what the request counted (absent outside /mcp, where nothing is counted). */
const metered = (def: AnyToolDef, ctx: Ctx) => (def.cost && ctx.meter ? { rate_limit: ctx.meter.report() } : {});

/**
 * Runs a tool from inside another, as a tools/call would: its validation, aliases, bounds, lease
 * rules and error mapping are that tool's own; its payload (without `ok`) is returned, and its
 * refusal is thrown on unchanged as a ToolError.
 */
export async function runTool<T>(def: AnyToolDef, ctx: Ctx, args: Record<string, unknown>): Promise<T> {
  const result = await callTool(def, ctx, Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)));
  const { ok: _ok, error, ...data } = (result.structuredContent ?? {}) as Record<string, unknown> & { error?: ErrorBody };
  if (result.isError && error) throw new ToolError(error.code, error.message, { hint: error.hint, retryable: error.retryable });
  // The registry has validated the answer against the tool's own output schema.
  return data as T;
}

/**
 * Runs one tool call through the shared contract. Every failure becomes an `isError` result
 * carrying the envelope, and unexpected errors are logged, not leaked; it throws only InputNeeded
 * (a confirmation to ask first), and only when ctx.confirmer is set.
 */
export async function callTool(def: AnyToolDef, ctx: Ctx, rawArgs: unknown): Promise<CallToolResult> {
  try {
    const { input } = compile(def);
    checkArgShape(rawArgs);
    const args = normalizeArgs(rawArgs, input);
    const parsed = parseArgs(input, args, def.name) as Record<string, unknown>;
    const { allow_secrets: allowSecrets, fields, confirm, ...toolArgs } = parsed as Record<string, unknown> & { fields?: string[] };
    if (fields) checkFields(def, fields);
    // Before anything that writes (a derived key mints the session's run): a refused call does nothing.
    const charged = await pay(def, ctx, toolArgs);
    const rule = def.idempotency === "derived" ? {} : def.idempotency;
    const derive = parsed.idempotency_key === undefined && rule !== undefined && !def.annotations.readOnly && (rule.when?.(parsed) ?? true);
    const key = derive ? await derivedKey(ctx, args) : (parsed.idempotency_key as string | undefined);
    const masked = masksSecrets(def) && allowSecrets !== true
      ? maskSecrets(toolArgs, "", new Set(["idempotency_key", ...(def.verbatim ?? [])]))
      : { value: toolArgs, found: [] };
    const run = async () => def.run(await attributed(def, confirm === true ? { ...charged, confirmed: true } : charged), masked.value);
    const { result, replay } =
      key && !def.annotations.readOnly
        ? await runIdempotent(ctx, def.name, key, args, run, derive ? rule : undefined)
        : { result: await run(), replay: false };
    const parsedResult = def.output.parse(result) as Record<string, unknown>;
    const { value: payload, truncation } = capResponse(fields ? project(parsedResult, fields) : parsedResult);
    const structured: Record<string, unknown> = { ok: true, ...payload, ...(replay ? { idempotent_replay: true } : {}), ...(truncation ? { truncation } : {}), ...metered(def, ctx) };
    if (masked.found.length > 0) {
      const note = `Secret-shaped text was masked before storing: ${masked.found.slice(0, 10).join(", ")}. Rotate it if it is real; pass allow_secrets: true to store such text verbatim.`;
      structured.warnings = [note, ...((payload.warnings as string[] | undefined) ?? [])];
    }
    if (def.text) {
      const text = def.text(payload, parsed);
      // The text of a capped payload is about its size; this holds it to the cap whatever the rendering.
      const bounded = text.length > MAX_RESPONSE_CHARS ? `${text.slice(0, MAX_RESPONSE_CHARS)}\n…[cut at ${MAX_RESPONSE_CHARS} characters]` : text;
      return { content: [{ type: "text", text: bounded }], structuredContent: structured };
    }
    return render(structured, def.summarize ? def.summarize(payload) : "");
  } catch (err) {
    // A question for the person is not a failure: the server answers it as input_required.
    if (err instanceof InputNeeded) throw err;
    if (!(err instanceof ToolError) || err.code === "internal_error") console.error(`tool ${def.name} failed`, err);
    // Extra failure fields only where the tool declares them, so the envelope matches its schema.
    return failureResult(err, { ...(err instanceof ToolError && err.data && def.errorData ? err.data : {}), ...metered(def, ctx) }, (error) => def.errorText?.(error, rawArgs));
  }
}

/**
 * A failed call's result: isError with the envelope, and its text rendering (a tool's own errorText,
 * e.g. the git tools' JSON under format: json, else the standard one).
 */
export function failureResult(err: unknown, data: Record<string, unknown> = {}, textOf: (error: ErrorBody) => string | undefined = () => undefined): CallToolResult {
  const error = toErrorBody(err);
  const structured = { ...data, ok: false, error };
  const text = textOf(error);
  const result = text === undefined
    ? render(structured, `Error [${error.code}]: ${error.message}${error.hint ? `\nHint: ${error.hint}` : ""}`)
    : { content: [{ type: "text" as const, text }], structuredContent: structured };
  return { ...result, isError: true };
}
