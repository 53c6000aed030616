import { z } from "zod";
import { assertPlainText, declaredMaxLength, SINGLE_LINE_MAX } from "./bounds";
import { excerpt, invalidInput } from "./errors";

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
 * are refused with the allowed ones listed, and control characters are refused in text (see
 * assertPlainText; NUL anywhere, since SQLite and most clients cut text at it). Arguments have
 * passed checkArgShape, so the recursion here is bounded.
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
          assertText(key, where ? `${where} key` : "key", true);
          assertText(value, where ? `${where}.${key}` : key, false);
          out[key] = value;
          continue;
        }
        unknown.push(key);
        continue;
      }
      if (Object.prototype.hasOwnProperty.call(raw, snake)) {
        throw invalidInput(`Both '${snake}' and its alias '${key}' were given${inWhere}.`, `Pass only '${snake}' (snake_case is the canonical spelling).`);
      }
      name = snake;
    }
    const path = where ? `${where}.${name}` : name;
    const field = schema.shape[name] as z.ZodType;
    if (typeof value === "string") assertPlainText(value, path, isSingleLine(field));
    else assertText(value, path, false, field);
    out[name] = normalizeChild(value, field, path);
  }
  if (unknown.length > 0) {
    // A hostile call can send thousands of keys: name a few, never echo them all.
    const named = unknown
      .slice(0, 10)
      .map((k) => excerpt(k, 40))
      .join(", ");
    throw invalidInput(
      `Unknown parameter${unknown.length > 1 ? "s" : ""}${inWhere}: ${named}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ""}.`,
      allowed.length > 0 ? `Allowed${where ? ` in ${where}` : " parameters"}: ${allowed.join(", ")} (camelCase aliases are accepted).` : "This tool takes no parameters.",
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

/** Short string fields are single-line text; longer ones are bodies (see assertPlainText). */
function isSingleLine(field: z.ZodType | undefined): boolean {
  const max = declaredMaxLength(field);
  return max !== undefined && max <= SINGLE_LINE_MAX;
}

/**
 * Checks the text inside a value: strings of an array field follow the element's bound; object
 * keys are single-line; strings inside free-form JSON are bodies.
 */
function assertText(value: unknown, path: string, singleLine: boolean, field?: z.ZodType): void {
  if (typeof value === "string") {
    assertPlainText(value, path, singleLine);
  } else if (Array.isArray(value)) {
    const element = field ? arrayElement(field) : null;
    const line = element ? isSingleLine(element) : singleLine;
    value.forEach((v, i) => assertText(v, `${path}[${i}]`, line, element ?? undefined));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      assertPlainText(k, `${path} key`, true);
      assertText(v, `${path}.${excerpt(k, 40)}`, false);
    }
  }
}

/** Validates normalized arguments, turning zod's issues into one clear message. */
export function parseArgs<S extends z.ZodType>(schema: S, args: Record<string, unknown>, toolName: string): z.output<S> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  throw invalidInput(
    `Invalid arguments for ${toolName}: ${describeIssues(parsed.error.issues, "arguments")}.`,
    "Fix the named parameters and call again; tools/list shows each parameter's type and limits.",
  );
}

/** Validation problems as one line, each naming where it is (`root` for the value itself). */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: string, max = 8): string {
  // An array of 20,000 bad items makes 20,000 issues: report the first few, each kept short.
  const problems = issues.slice(0, max).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map((p) => excerpt(String(p), 40)).join(".") : root;
    return `${where}: ${excerpt(issue.message, 200)}`;
  });
  const more = issues.length > max ? `; and ${issues.length - max} more problems` : "";
  return `${problems.join("; ")}${more}`;
}
