/** Raw MCP 2026-07-28 requests, for tests that look at the wire rather than through an SDK client. */

export const MODERN = "2026-07-28";

/** One JSON-RPC message of an answer. */
export type Frame = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string } };

export interface ModernRequestOptions {
  id?: number | string;
  /** The Mcp-Name header (a tool's or prompt's name). */
  name?: string;
  /** Headers beside the revision's own (Mcp-Param-*, CF-Connecting-IP, …). */
  headers?: Record<string, string>;
  /** The client capabilities the envelope declares (default: form elicitation). */
  capabilities?: Record<string, unknown>;
}

/** A 2026-07-28 request: the revision's `_meta` envelope (merged with any `params._meta`) and the headers it requires. */
export function modernRequest(key: string, method: string, params: Record<string, unknown> = {}, o: ModernRequestOptions = {}): RequestInit {
  return {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": MODERN,
      "Mcp-Method": method,
      ...(o.name ? { "Mcp-Name": o.name } : {}),
      ...o.headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: o.id ?? 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": o.capabilities ?? { elicitation: { form: {} } },
          ...((params._meta as object | undefined) ?? {}),
        },
      },
    }),
  };
}

/** An answer's messages: the JSON body, or every frame of an SSE stream (the last is the answer). */
export async function framesOf(res: Response): Promise<Frame[]> {
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) return [(await res.json()) as Frame];
  return (await res.text())
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)) as Frame);
}
