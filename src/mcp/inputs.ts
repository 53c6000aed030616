import type { z } from "zod";
import { invalidInput } from "./errors";

const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Makes raw tool arguments fit a strict snake_case schema: camelCase keys are accepted as
 * aliases of their snake_case names, unknown keys are refused with the allowed ones listed,
 * and NUL characters are refused anywhere (SQLite and most clients cut text at them).
 */
export function normalizeArgs(raw: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidInput("Tool arguments must be a JSON object.", `Pass an object with some of: ${allowed.join(", ")}.`);
  }
  const allowedSet = new Set(allowed);
  const out: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    let name = key;
    if (!allowedSet.has(key)) {
      const snake = camelToSnake(key);
      if (snake === key || !allowedSet.has(snake)) {
        unknown.push(key);
        continue;
      }
      if (Object.prototype.hasOwnProperty.call(raw, snake)) {
        throw invalidInput(
          `Both '${snake}' and its alias '${key}' were given.`,
          `Pass only '${snake}' (snake_case is the canonical spelling).`,
        );
      }
      name = snake;
    }
    assertNoNul(value, name);
    out[name] = value;
  }
  if (unknown.length > 0) {
    throw invalidInput(
      `Unknown parameter${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`,
      allowed.length > 0
        ? `Allowed parameters: ${allowed.join(", ")} (camelCase aliases are accepted).`
        : "This tool takes no parameters.",
    );
  }
  return out;
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
