/**
 * Hostile arguments generated from a tool's advertised input schema (its tools/list entry), so the
 * fuzz walk covers every tool the registry has, including tools added later. Shared by the fuzz
 * test (inside workerd) and `npm run bench:fuzz` (over HTTP against wrangler dev).
 */

type Schema = Record<string, unknown>;

type FuzzKind = "oversized" | "deep" | "wrong_type" | "control";

export interface FuzzCase {
  tool: string;
  /** The top-level parameter the case attacks; the refusal must name it. */
  field: string;
  kind: FuzzKind;
  args: Record<string, unknown>;
}

/** Characters no identifier or title may carry: bell, escape (an ANSI colour), backspace, DEL. */
export const CONTROL_TEXT = "ok\u0007\u001b[31mred\u0008\u007f";

/** Bigger than any string bound a tool declares, and about half the /mcp body limit. */
const HUGE_STRING_LENGTH = 1_000_000;

const DEPTH = 5_000;

/** Nesting far past any depth bound, built without recursion so building it cannot overflow. */
function deepValue(depth = DEPTH): unknown {
  let v: unknown = "bottom";
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { n: v };
  return v;
}

/** One shared deep value: every case points at it, and argsJson recognises it. */
export const DEEP = deepValue();

/** The same nesting as JSON text, built iteratively (JSON.stringify itself overflows on it). */
function deepJson(depth = DEPTH): string {
  let open = "";
  let close = "";
  for (let i = depth - 1; i >= 0; i--) {
    open += i % 2 === 0 ? "[" : '{"n":';
    close = (i % 2 === 0 ? "]" : "}") + close;
  }
  return `${open}"bottom"${close}`;
}

const DEEP_MARK = "\u0000deep\u0000";

/** A case's arguments as JSON text, for sending over HTTP. */
export function argsJson(args: Record<string, unknown>): string {
  const text = JSON.stringify(args, (_k, v: unknown) => (v === DEEP ? DEEP_MARK : v));
  return text.replace(JSON.stringify(DEEP_MARK), deepJson());
}

/** The first alternative of a union that is not null, or the schema itself. */
function concrete(s: Schema): Schema {
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alts) return concrete(alts.find((a) => a.type !== "null") ?? alts[0]!);
  return s;
}

const typeOf = (s: Schema): string | undefined => {
  const c = concrete(s);
  if (c.enum) return "enum";
  if (c.const !== undefined) return "const";
  return typeof c.type === "string" ? c.type : undefined;
};

/** A value of the right type, for the required parameters a case does not attack. */
function plausible(s: Schema): unknown {
  const c = concrete(s);
  if (c.default !== undefined) return c.default;
  if (Array.isArray(c.enum)) return c.enum[0];
  if (c.const !== undefined) return c.const;
  switch (c.type) {
    case "string":
      return "x";
    case "integer":
    case "number":
      return typeof c.minimum === "number" ? c.minimum : 1;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "x";
  }
}

/** A value of a type the parameter does not take. */
function wrongType(s: Schema): unknown {
  switch (typeOf(s)) {
    case "string":
    case "enum":
    case "const":
      return { not: "a string" };
    case "integer":
    case "number":
      return "12abc";
    case "boolean":
      return "yes";
    case "array":
      return "not an array";
    case "object":
      return [1, 2, 3];
    default:
      return undefined;
  }
}

/** Far over the parameter's bound: a huge string, a huge array, or a huge free-form object. */
function oversized(s: Schema, huge: string): unknown {
  const c = concrete(s);
  switch (c.type) {
    case "string":
    case undefined: {
      // Inline file content is allowed to be bigger than the shared huge string: go past its own bound.
      const max = c.maxLength as number | undefined;
      return max !== undefined && max >= huge.length ? "a".repeat(max + 1) : huge;
    }
    case "array": {
      const n = Math.max(((c.maxItems as number | undefined) ?? 100) + 1, 20_000);
      const item = concrete((c.items as Schema | undefined) ?? {});
      return Array.from({ length: n }, () => plausible(item));
    }
    case "object":
      return Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, "v".repeat(20)]));
    default:
      return undefined;
  }
}

/** Control characters where the parameter takes text (strings, or strings inside arrays). */
function controlled(s: Schema): unknown {
  const c = concrete(s);
  if (c.type === "string" && !c.enum) return CONTROL_TEXT;
  if (c.type === "array" && typeOf((c.items as Schema | undefined) ?? {}) === "string") return [CONTROL_TEXT];
  return undefined;
}

/** Every case for one tool: four attacks on each of its top-level parameters. */
export function fuzzCases(tool: { name: string; inputSchema: Schema }, huge = "a".repeat(HUGE_STRING_LENGTH)): FuzzCase[] {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((tool.inputSchema.required ?? []) as string[]);
  const base: Record<string, unknown> = {};
  for (const name of required) base[name] = plausible(props[name]!);
  const out: FuzzCase[] = [];
  for (const [field, schema] of Object.entries(props)) {
    const attacks: Array<[FuzzKind, unknown]> = [
      ["oversized", oversized(schema, huge)],
      ["deep", DEEP],
      ["wrong_type", wrongType(schema)],
      ["control", controlled(schema)],
    ];
    for (const [kind, value] of attacks) {
      if (value === undefined) continue;
      out.push({ tool: tool.name, field, kind, args: { ...base, [field]: value } });
    }
  }
  return out;
}
