/**
 * `fields` on the list tools whose rows are big (change events with their diffs, decisions with
 * their rationale, handoffs with their bodies): the caller names the item keys it wants and gets
 * only those, so a page of history costs a fraction of its full size.
 */
import { z } from "zod";
import type { AnyToolDef } from "./define-tool";
import { invalidInput } from "./errors";

/** Kept in every projected item whatever `fields` says, so a row can always be fetched again. */
const ALWAYS = ["id"];

export const fieldsField = z.array(z.string().min(1).max(64)).min(1).max(50).optional().describe("Only these item keys (and id).");

/** The object schema of a list tool's `items`; a tool marked `fields` without one is a bug. */
export function itemSchema(def: AnyToolDef): z.ZodObject {
  const items = (def.output.shape as Record<string, z.ZodType>).items;
  const element = items instanceof z.ZodArray ? items.element : undefined;
  if (!(element instanceof z.ZodObject)) throw new Error(`${def.name} takes fields but its output has no items of objects`);
  return element;
}

/** Refuses keys the items do not have, before the tool runs, naming the ones they do. */
export function checkFields(def: AnyToolDef, fields: readonly string[]): void {
  const known = Object.keys(itemSchema(def).shape);
  const unknown = fields.filter((f) => !known.includes(f));
  if (unknown.length > 0) {
    throw invalidInput(
      `fields: ${def.name} items have no key ${unknown
        .slice(0, 5)
        .map((f) => `'${f.slice(0, 64)}'`)
        .join(", ")}`,
      `Pick from: ${known.join(", ")}.`,
    );
  }
}

/** The payload with each item cut down to the named keys (plus id). */
export function project(payload: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const keep = new Set([...ALWAYS, ...fields]);
  const items = payload.items as Record<string, unknown>[];
  return { ...payload, items: items.map((item) => Object.fromEntries(Object.entries(item).filter(([k]) => keep.has(k)))) };
}
