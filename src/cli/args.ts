/**
 * Command-line words to values. `split` separates flags from positionals without knowing the
 * command; `toolArguments` then reads them against a tool's input schema (JSON Schema from the
 * server's listing), so every tool's flags come from its own definition and none is written here.
 */
import { readFileSync } from "node:fs";

export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

export interface Split {
  positionals: string[];
  /** Flag name (as typed, without dashes) → each value given; `true` for a bare flag. */
  flags: Map<string, Array<string | true>>;
}

/** `--name value`, `--name=value`, `--flag`, `--no-flag`; `--` ends flags. Short `-h` and `-j` only. */
export function split(argv: readonly string[], bareFlags: ReadonlySet<string> = new Set()): Split {
  const positionals: string[] = [];
  const flags = new Map<string, Array<string | true>>();
  const add = (name: string, value: string | true) => {
    const list = flags.get(name) ?? [];
    list.push(value);
    flags.set(name, list);
  };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (word === "-h") add("help", true);
    else if (word === "-j") add("json", true);
    else if (word.startsWith("--") && word.length > 2) {
      const eq = word.indexOf("=");
      if (eq > 2) add(word.slice(2, eq), word.slice(eq + 1));
      else {
        const name = word.slice(2);
        const next = argv[i + 1];
        if (bareFlags.has(name) || name.startsWith("no-") || next === undefined || (next.startsWith("--") && next.length > 2)) add(name, true);
        else {
          add(name, next);
          i++;
        }
      }
    } else positionals.push(word);
  }
  return { positionals, flags };
}

/** The same name typed with dashes or underscores. */
export const flagKey = (name: string): string => name.replace(/-/g, "_");

/** Takes a flag out of the split (all its spellings), returning its values. */
export function take(s: Split, name: string): Array<string | true> {
  const out: Array<string | true> = [];
  for (const key of [...s.flags.keys()]) {
    if (flagKey(key) === flagKey(name)) {
      out.push(...s.flags.get(key)!);
      s.flags.delete(key);
    }
  }
  return out;
}

export const takeBool = (s: Split, name: string): boolean => {
  const values = take(s, name);
  const negated = take(s, `no-${name}`);
  if (negated.length) return false;
  const last = values.at(-1);
  return last === true || last === "true" || last === "1";
};

export const takeString = (s: Split, name: string): string | undefined => {
  const last = take(s, name).at(-1);
  if (last === true) throw new UsageError(`--${name} needs a value.`, `Write --${name} <value>.`);
  return last;
};

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  description?: string;
  default?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

/** The schema's main type, looking through `anyOf`/`oneOf` (zod's optional and nullable shapes). */
export function typeOf(schema: JsonSchema | undefined): string {
  if (!schema) return "string";
  const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== "null") : schema.type;
  if (t) return t;
  for (const branch of schema.anyOf ?? schema.oneOf ?? []) {
    const inner = typeOf(branch);
    if (inner !== "null") return inner;
  }
  return schema.enum && typeof schema.enum[0] === "number" ? "number" : "string";
}

function readJson(flag: string, text: string): unknown {
  const source = text.startsWith("@") ? readFileSync(text.slice(1), "utf8") : text;
  try {
    return JSON.parse(source);
  } catch {
    throw new UsageError(`--${flag} takes JSON (or @file.json); this did not parse.`, `Example: --${flag} '{"key": "value"}'`);
  }
}

function scalar(flag: string, schema: JsonSchema | undefined, value: string | true): unknown {
  const type = typeOf(schema);
  if (type === "boolean") {
    if (value === true || value === "true" || value === "1") return true;
    if (value === "false" || value === "0") return false;
    throw new UsageError(`--${flag} is a yes/no flag; '${value}' is neither.`, `Write --${flag} or --no-${flag.replace(/_/g, "-")}.`);
  }
  if (value === true) throw new UsageError(`--${flag} needs a value.`, `Write --${flag} <value>${schema?.description ? ` (${schema.description})` : ""}.`);
  if (type === "number" || type === "integer") {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || (type === "integer" && !Number.isInteger(n)))
      throw new UsageError(`--${flag} takes ${type === "integer" ? "a whole number" : "a number"}; '${value.slice(0, 40)}' is not.`, `Write --${flag} 10.`);
    return n;
  }
  if (type === "object" || type === "array") return readJson(flag, value);
  // A file's text for a long string, as curl's @file.
  return value.startsWith("@") && value.length > 1 ? readFileSync(value.slice(1), "utf8") : value;
}

/**
 * The tool's arguments from the command line: `--args '{…}'` (or @file, or - for stdin text given
 * as `stdin`) as a base, each flag on top (arrays by repeating the flag or as JSON), then
 * positionals filling the required parameters not given, in the schema's order.
 */
export function toolArguments(schema: JsonSchema, s: Split, stdin?: string): Record<string, unknown> {
  const props = schema.properties ?? {};
  const args: Record<string, unknown> = {};
  const base = take(s, "args").at(-1);
  if (base !== undefined) {
    const parsed = base === true ? undefined : base === "-" ? readJson("args", stdin ?? "") : readJson("args", base);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new UsageError("--args takes a JSON object.", `Example: --args '{"limit": 5}'`);
    Object.assign(args, parsed);
  }
  for (const [typed, values] of s.flags) {
    const name = flagKey(typed);
    const negated = name.startsWith("no_") && !(name in props) ? name.slice(3) : null;
    const key = negated ?? name;
    const prop = props[key];
    if (!prop) {
      const known = Object.keys(props).map((k) => `--${k.replace(/_/g, "-")}`);
      throw new UsageError(`Unknown flag --${typed}.`, known.length ? `This tool takes: ${known.join(", ")}.` : "This tool takes no flags.");
    }
    if (negated) {
      if (typeOf(prop) !== "boolean") throw new UsageError(`--${typed}: --${key.replace(/_/g, "-")} is not a yes/no flag.`, `Write --${key.replace(/_/g, "-")} <value>.`);
      args[key] = false;
      continue;
    }
    if (typeOf(prop) === "array") {
      const items: unknown[] = [];
      for (const v of values) {
        if (typeof v === "string" && v.trimStart().startsWith("[")) items.push(...(readJson(typed, v) as unknown[]));
        else items.push(scalar(typed, prop.items, v));
      }
      args[key] = items;
    } else args[key] = scalar(typed, prop, values.at(-1)!);
  }
  // Positionals fill the required parameters; a tool with none takes one for its first string parameter.
  const required = schema.required ?? [];
  const first = Object.keys(props)[0];
  const open = (required.length ? required : first && typeOf(props[first]) === "string" ? [first] : []).filter((k) => !(k in args));
  const positionals = [...s.positionals];
  for (const key of open) {
    const word = positionals.shift();
    if (word === undefined) break;
    const prop = props[key];
    args[key] = typeOf(prop) === "array" ? [scalar(key, prop?.items, word)] : scalar(key, prop, word);
  }
  if (positionals.length) throw new UsageError(`Unexpected argument '${positionals[0]!.slice(0, 60)}'.`, "Name each value with its flag (see --help).");
  return args;
}
