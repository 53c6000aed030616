import type { MiddlewareHandler } from "hono";
import type { Env } from "../env";

/**
 * DNS-rebinding protection the MCP transport spec asks for: a browser request must come from
 * an allowed origin (or the server's own). Requests without Origin — CLI agents, SDK
 * clients — are not browser requests and pass.
 */
export function originGuard(): MiddlewareHandler<{ Bindings: Env }> {
  return async function originGuardMiddleware(c, next) {
    const origin = c.req.header("Origin");
    if (origin !== undefined) {
      const allowed = (c.env.ALLOWED_ORIGINS ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      const own = new URL(c.req.url).origin;
      if (origin !== own && !allowed.includes(origin)) {
        return c.json({ jsonrpc: "2.0", error: { code: -32000, message: `Forbidden: origin ${origin} is not allowed` }, id: null }, 403);
      }
    }
    await next();
  };
}
