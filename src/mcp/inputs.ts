import { z } from "zod";
import { invalidInput } from "./errors";

const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The object schema inside optional/nullable/default wrappers (or a union's object option), if any. */
function objectInside(schema: z.ZodType): z.ZodObject | null {
  let s: z.ZodType = schema;
  for (let i = 0; i < 5; i++) {
    if (s instanceof z.ZodObject) return s;
    if (s instanceof z.ZodUnion) return (s.options as z.ZodType[]).map(objectInside).find((o) => o !== null) ?? null;
    const inner = (s as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
    if (!inner) return null;
    s = inner;
  }
  return null;
}

/** The element schema of an array inside optional/nullable/default wrappers, if there is one. */
function arrayElement(schema: z.ZodType): z.ZodType | null {
  let s: z.ZodType = schema;
  for (let i = 0; i < 5; i++) {
    if (s instanceof z.ZodArray) return s.element as z.ZodType;
    const inner = (s as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
    if (!inner) return null;
    s = inner;
  }
  return null;
}

/**
 * Makes raw tool arguments fit a strict snake_case schema, at every level of nesting (patches,
 * batch items): camelCase keys are accepted as aliases of their snake_case names, unknown keys
 * are refused with the allowed ones listed, and NUL characters are refused anywhere (SQLite and
 * most clients cut text at them).
 */
export function normalizeArgs(raw: unknown, schema: z.ZodObject, where = ""): Record<string, unknown> {
  const allowed = Object.keys(schema.shape);
  const inWhere = where ? ` in ${where}` : "";
  if (raw === undefined || raw === null) {
    if (where) return raw as never;
    return {};
  }
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidInput(`${where ? `'${where}'` : "Tool arguments"} must be a JSON object.`, `Pass an object with some of: ${allowed.join(", ")}.`);
  }
  const allowedSet = new Set(allowed);
  // An object declared open (a catchall other than never) keeps keys its shape does not name.
  const catchall = (schema._zod.def as { catchall?: z.ZodType }).catchall;
  const open = catchall !== undefined && !(catchall instanceof z.ZodNever);
  const out: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    let name = key;
    if (!allowedSet.has(key)) {
      const snake = camelToSnake(key);
      if (snake === key || !allowedSet.has(snake)) {
        if (open) {
          assertNoNul(value, where ? `${where}.${key}` : key);
          out[key] = value;
          continue;
        }
        unknown.push(key);
        continue;
      }
      if (Object.prototype.hasOwnProperty.call(raw, snake)) {
        throw invalidInput(
          `Both '${snake}' and its alias '${key}' were given${inWhere}.`,
          `Pass only '${snake}' (snake_case is the canonical spelling).`,
        );
      }
      name = snake;
    }
    const path = where ? `${where}.${name}` : name;
    assertNoNul(value, path);
    out[name] = normalizeChild(value, schema.shape[name] as z.ZodType, path);
  }
  if (unknown.length > 0) {
    throw invalidInput(
      `Unknown parameter${unknown.length > 1 ? "s" : ""}${inWhere}: ${unknown.join(", ")}.`,
      allowed.length > 0
        ? `Allowed${where ? ` in ${where}` : " parameters"}: ${allowed.join(", ")} (camelCase aliases are accepted).`
        : "This tool takes no parameters.",
    );
  }
  return out;
}

function normalizeChild(value: unknown, schema: z.ZodType, path: string): unknown {
  const obj = objectInside(schema);
  if (obj && value && typeof value === "object" && !Array.isArray(value)) return normalizeArgs(value, obj, path);
  const element = arrayElement(schema);
  const elementObj = element ? objectInside(element) : null;
  if (elementObj && Array.isArray(value)) {
    return value.map((v, i) => (v && typeof v === "object" && !Array.isArray(v) ? normalizeArgs(v, elementObj, `${path}[${i}]`) : v));
  }
  return value;
}

function assertNoNul(value: unknown, path: string): void {
  if (typeof value === "string") {
    if (value.includes("\u0000")) {
      throw invalidInput(
        `Parameter '${path}' contains a NUL character (U+0000).`,
        "Remove or escape NUL characters; text fields must be plain text.",
      );
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoNul(v, `${path}[${i}]`));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) assertNoNul(v, `${path}.${k}`);
  }
}

/** Validates normalized arguments, turning zod's issues into one clear message. */
export function parseArgs<S extends z.ZodType>(schema: S, args: Record<string, unknown>, toolName: string): z.output<S> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "arguments";
    return `${where}: ${issue.message}`;
  });
  throw invalidInput(
    `Invalid arguments for ${toolName}: ${problems.join("; ")}.`,
    "Fix the named parameters and call again; tools/list shows each parameter's type and limits.",
  );
}
