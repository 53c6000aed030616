import type { Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { AnyToolDef } from "./define-tool";
import { confirmField } from "./confirm";
import { jsonSchema } from "./json-schema";
import { withParamHeaders } from "./param-headers";
import { rateLimitField } from "./meter";
import { fieldsField, itemSchema } from "./fields";
import { truncationField } from "./response-cap";

// A tool's schemas as every surface lists them and the call pipeline (./call.ts) enforces them: one
// compilation per definition, whichever catalog the definition is listed in.

const idempotencyKeyField = z.string().min(1).max(200).optional().describe("Replays the first result for 24 h.");

const allowSecretsField = z.boolean().optional().describe("Keep secrets unmasked.");

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
export function masksSecrets(def: AnyToolDef): boolean {
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
export function compile(def: AnyToolDef): Compiled {
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
      inputSchema: withParamHeaders(jsonSchema(input, "input"), !def.annotations.readOnly) as Tool["inputSchema"],
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
