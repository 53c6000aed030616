/**
 * Tool parameters mirrored into HTTP headers (`x-mcp-header`, MCP 2026-07-28, SEP-2243), so a
 * gateway can route or audit a write without reading its body: the project a write acts in and the
 * GitHub repository it acts on. (A read's project is a filter, not a target, and each marked
 * parameter costs every listing a few tokens.) The listing marks them, a client sends
 * `Mcp-Param-<Name>` with each value, and the server checks every such header against the body
 * before anything runs.
 */

/** A top-level parameter of these names, when it is a plain string, is declared as the header. */
const ROUTED: Readonly<Record<string, string>> = { project_id: "Project", repo: "Repository" };

type JsonSchema = Record<string, unknown>;

/** A write's input schema with `x-mcp-header` on each routed parameter (a new object; the one given is left as it is). */
export function withParamHeaders(schema: JsonSchema, writes: boolean): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!writes || !properties || !Object.keys(properties).some((name) => isRouted(name, properties[name]!))) return schema;
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, isRouted(name, p) ? { ...p, "x-mcp-header": ROUTED[name] } : p])),
  };
}

const isRouted = (name: string, p: JsonSchema) => Object.hasOwn(ROUTED, name) && p.type === "string";

/** The header-bound parameters of a listed input schema: parameter → header name. */
export function paramHeadersOf(inputSchema: { properties?: Record<string, unknown> }): Array<[param: string, header: string]> {
  return Object.entries(inputSchema.properties ?? {}).flatMap(([name, p]) => {
    const header = p && typeof p === "object" ? (p as JsonSchema)["x-mcp-header"] : undefined;
    return typeof header === "string" ? [[name, header] as [string, string]] : [];
  });
}

const BASE64_WRAPPED = { open: "=?base64?", close: "?=" };

/** A header's value as the client meant it: Base64 unwrapped and decoded (strictly), or the literal; null when malformed. */
export function decodeParamHeader(raw: string): string | null {
  if (raw.startsWith(BASE64_WRAPPED.open) && raw.endsWith(BASE64_WRAPPED.close) && raw.length >= BASE64_WRAPPED.open.length + BASE64_WRAPPED.close.length) {
    const encoded = raw.slice(BASE64_WRAPPED.open.length, raw.length - BASE64_WRAPPED.close.length);
    if (encoded.length % 4 !== 0 || !isBase64(encoded)) return null;
    try {
      return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0)));
    } catch {
      return null;
    }
  }
  // A plain value is visible ASCII and spaces (RFC 9110 field content); anything else had to be Base64.
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return null;
  }
  return raw;
}

/** The standard alphabet with padding only at the end (at most two). */
function isBase64(s: string): boolean {
  const body = s.endsWith("==") ? s.slice(0, -2) : s.endsWith("=") ? s.slice(0, -1) : s;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    const ok = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
    if (!ok) return false;
  }
  return true;
}

/** A body value as its header carries it: numbers in decimal, booleans in lower case. */
const encoded = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null);

/**
 * Why a call's `Mcp-Param-*` headers do not match its arguments, or null when they do. A parameter
 * the body leaves out (or sets to null) must not have a header, and one it sets must have the header
 * with the same value.
 */
export function paramHeaderMismatch(bound: ReadonlyArray<[string, string]>, args: Record<string, unknown>, header: (name: string) => string | null): string | null {
  for (const [param, name] of bound) {
    const raw = header(`Mcp-Param-${name}`);
    const value = args[param] === null || args[param] === undefined ? null : encoded(args[param]);
    if (raw === null) {
      if (value !== null) return `Mcp-Param-${name} is missing; the body sets ${param}, which this tool mirrors into that header.`;
      continue;
    }
    const decoded = decodeParamHeader(raw);
    if (decoded === null) return `Mcp-Param-${name} is malformed: a plain value is visible ASCII, anything else =?base64?<standard Base64 of its UTF-8>?=.`;
    if (value === null) return `Mcp-Param-${name} is set, but the body has no ${param}.`;
    if (decoded !== value) return `Mcp-Param-${name} does not match the body's ${param}.`;
  }
  return null;
}
