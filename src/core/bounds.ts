/**
 * Bounds every tool call gets before any of its own code runs: how deep and how big arguments may
 * be, which characters text may carry, and how much of the input an error may quote back. They sit
 * in the registry so every tool, and every tool still to come, inherits them.
 */
import { z } from "zod";
import { excerpt, invalidInput } from "./errors";

/** Deeper than any argument a tool takes (patches, batch items, responses, metadata). */
export const MAX_ARG_DEPTH = 24;
/** All arguments of one call, as JSON; the largest legitimate call is an inline 1 MiB file in base64. */
export const MAX_ARG_BYTES = 2 * 1024 * 1024;
/** Strings up to this bound are identifiers, names, titles, refs or queries: one line, no control characters. */
export const SINGLE_LINE_MAX = 300;

/** A path inside the arguments for messages: top-level names as given, then indexes and keys. */
const describePath = (path: readonly (string | number)[]) => path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? excerpt(p, 40) : `.${excerpt(p, 40)}`)).join("") || "arguments";

/**
 * Refuses arguments nested deeper than MAX_ARG_DEPTH or larger than MAX_ARG_BYTES, walking them
 * iteratively so hostile nesting cannot overflow the stack here or in anything that runs later.
 */
export function checkArgShape(raw: unknown): void {
  const stack: Array<{ v: unknown; depth: number; path: (string | number)[] }> = [{ v: raw, depth: 0, path: [] }];
  let bytes = 0;
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (typeof v === "string") bytes += v.length + 2;
    else if (v === null || typeof v !== "object") bytes += 8;
    else {
      if (depth >= MAX_ARG_DEPTH) {
        throw invalidInput(`Parameter '${describePath(path.slice(0, 1))}' is nested more than ${MAX_ARG_DEPTH} levels deep.`, "Flatten the value; no parameter of any tool needs that much nesting.");
      }
      const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
      bytes += 2;
      for (const [k, x] of entries) {
        if (typeof k === "string") bytes += k.length + 3;
        stack.push({ v: x, depth: depth + 1, path: path.length === 0 ? [k] : path });
      }
    }
    if (bytes > MAX_ARG_BYTES) {
      throw invalidInput(
        `The arguments are larger than ${MAX_ARG_BYTES / 1024 / 1024} MiB${path.length > 0 ? ` (at '${describePath(path.slice(0, 1))}')` : ""}.`,
        "Send less per call: page through it, split a batch, or upload big content in several calls.",
      );
    }
  }
}

/** The first control character in `text` a field refuses: C0 and C1 controls and DEL; bodies allow tab, LF and CR. */
export function firstControl(text: string, singleLine: boolean): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
      if (!singleLine && (c === 9 || c === 10 || c === 13)) continue;
      return i;
    }
  }
  return -1;
}

const CONTROL_NAMES: Record<number, string> = { 0: "NUL", 7: "BEL", 8: "backspace", 9: "tab", 10: "line feed", 13: "carriage return", 27: "ESC", 127: "DEL" };

/**
 * Refuses control characters in text: none at all in single-line fields (identifiers, names,
 * titles: what a terminal or a log would render wrongly or a lookup would miss), and none but
 * tab, newline and carriage return in bodies. `singleLine` comes from the field's own bound.
 */
export function assertPlainText(value: string, path: string, singleLine: boolean): void {
  const at = firstControl(value, singleLine);
  if (at < 0) return;
  const cp = value.charCodeAt(at);
  const code = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}${CONTROL_NAMES[cp] ? ` (${CONTROL_NAMES[cp]})` : ""}`;
  throw invalidInput(
    `Parameter '${path}' contains the control character ${code} at position ${at}.`,
    singleLine
      ? "Identifiers, names and titles are one line of plain text: remove control characters, tabs and line breaks."
      : "Text may contain tabs and line breaks but no other control characters: remove or escape them.",
  );
}

/** The maximum length a string schema declares, looking through optional/nullable/default wrappers. */
export function declaredMaxLength(schema: z.ZodType | undefined): number | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; s && i < 6; i++) {
    if (s instanceof z.ZodString) return s.maxLength ?? undefined;
    s = (s._zod.def as { innerType?: z.ZodType }).innerType;
  }
  return undefined;
}

/** The UTF-8 size of a value as JSON (arguments are already bounded in depth when this runs). */
export const jsonBytes = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength;

function depthOf(value: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > max) max = d;
    if (v && typeof v === "object") for (const x of Object.values(v)) stack.push([x, d + 1]);
  }
  return max;
}

/**
 * A free-form JSON field (metadata, extras, counters) with a byte bound and a depth bound, both
 * advertised in the schema (`x-max-bytes`, `x-max-depth`) and enforced before the tool runs.
 */
export function boundedJson<T extends z.ZodType>(schema: T, limits: { maxBytes: number; maxDepth: number }): T {
  return schema
    .superRefine((value, ctx) => {
      const bytes = jsonBytes(value);
      if (bytes > limits.maxBytes) {
        ctx.addIssue({ code: "custom", message: `is ${Math.ceil(bytes / 1024)}KB as JSON; the limit is ${limits.maxBytes / 1024}KB` });
      } else if (depthOf(value) > limits.maxDepth) {
        ctx.addIssue({ code: "custom", message: `is nested more than ${limits.maxDepth} levels deep` });
      }
    })
    .meta({ "x-max-bytes": limits.maxBytes, "x-max-depth": limits.maxDepth }) as unknown as T;
}
