import type { MiddlewareHandler } from "hono";
import type { Env } from "../env";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Whether `origin` may call /mcp from a browser. The listed ALLOWED_ORIGINS may; so may the
 * server's own origin, but only where that origin cannot be an attacker's name: a loopback host.
 * The request's own origin is built from its Host header, which a DNS-rebinding page controls
 * (Host and Origin both evil.example, resolving to 127.0.0.1), so "same as my own" proves nothing
 * elsewhere; a deployment that serves browser pages on its own domain lists that origin.
 */
function originAllowed(origin: string, requestUrl: string, env: Env): boolean {
  const allowed = (env.ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (allowed.includes(origin)) return true;
  const own = new URL(requestUrl);
  return origin === own.origin && LOOPBACK.has(own.hostname);
}

/**
 * DNS-rebinding protection the MCP transport spec asks for: a browser request must come from an
 * allowed origin. Requests without Origin (CLI agents, SDK clients) are not browser requests and pass.
 */
export function originGuard(): MiddlewareHandler<{ Bindings: Env }> {
  return async function originGuardMiddleware(c, next) {
    const origin = c.req.header("Origin");
    if (origin !== undefined && !originAllowed(origin, c.req.url, c.env)) {
      return c.json({ jsonrpc: "2.0", error: { code: -32000, message: `Forbidden: origin ${origin.slice(0, 200)} is not allowed` }, id: null }, 403);
    }
    await next();
  };
}
