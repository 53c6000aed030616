import { z } from "zod";

const advertised = new WeakMap<object, z.ZodType>();

/**
 * A parameter taken as bounded, opaque JSON and checked against its document's schema by the tool
 * (whose errors can then name the part at fault, e.g. the step of a plan) is still advertised with
 * that document's shape: without this its listing would say only "an object".
 */
export function advertisedAs<T extends z.ZodType>(schema: T, shape: z.ZodType): T {
  advertised.set(schema, shape);
  return schema;
}

/** What the opaque schema itself says and the document's shape must keep: its own words and bounds. */
const KEPT_FROM_OPAQUE = ["description", "x-max-bytes", "x-max-depth"];

/** A zod schema as the JSON Schema tools/list and describe advertise (without the $schema line). */
export function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema: js }) => {
      const shape = advertised.get(zodSchema);
      if (!shape) return;
      const out = js as Record<string, unknown>;
      const kept = Object.fromEntries(KEPT_FROM_OPAQUE.filter((k) => k in out).map((k) => [k, out[k]]));
      for (const k of Object.keys(out)) delete out[k];
      Object.assign(out, jsonSchema(shape, io), kept);
    },
  }) as Record<string, unknown>;
  return rest;
}

/**
 * Marks a schema that repeats another tool's arguments (task_create_many's items are task_create's):
 * the lean tools/list gives its structure (names, types, enums, required) and leaves the words to
 * the tool its description names; in a lean output schema it is named only.
 */
export const BRIEF_IN_LISTING = { "x-brief": true } as const;
