import { z } from "zod";

/** A zod schema as the JSON Schema tools/list and describe advertise (without the $schema line). */
export function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

/**
 * Marks a schema that repeats another tool's arguments (task_create_many's items are task_create's):
 * the lean tools/list names it in its description instead of spelling it out again.
 */
export const BRIEF_IN_LISTING = { "x-brief": true } as const;
