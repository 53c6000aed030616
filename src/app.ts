import { Hono, type Context } from "hono";
import type { Env } from "./env";
import { benchRoutes } from "./http/bench";
import { mcpRoutes } from "./http/mcp";
import { oauthRoutes } from "./http/oauth";
import { oauthClientRoutes } from "./http/oauth-clients";
import { webhookRoutes } from "./http/webhooks";
import { hookRoutes } from "./http/hooks";
import { DASHBOARD_PATH, dashboardRoutes } from "./http/dashboard";
import { HOOKS_PATH } from "./auth/oauth";
import { iconSvg } from "./server/icons";
import { SERVER_INFO } from "./server/server";

export const app = new Hono<{ Bindings: Env }>();

app.get("/healthz", (c) => c.json({ ok: true, service: SERVER_INFO.name, version: SERVER_INFO.version }));

// Icons named in listings (src/server/icons.ts): public, and the same for every tenant.
const svgIcon = (c: Context, name: string) => {
  const svg = iconSvg(name);
  if (!svg) return c.notFound();
  return c.body(svg, 200, { "Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff" });
};
app.get("/icons/:file{[a-z-]+\\.svg}", (c) => svgIcon(c, c.req.param("file").replace(/\.svg$/, "")));
// Browsers ask for /favicon.ico on pages that link no icon (a JSON answer, a redirect's landing).
app.get("/favicon.ico", (c) => svgIcon(c, "agent-ledger"));

// The DNS-rebinding guard runs at the edge (src/edge.ts), before the credential check.
app.route(HOOKS_PATH, hookRoutes);
app.route("/mcp", mcpRoutes);
app.route("/bench", benchRoutes);
app.route("/webhooks", webhookRoutes);
app.route(DASHBOARD_PATH, dashboardRoutes);
// Sign-in and consent for OAuth clients; discovery, token and registration are the provider's (src/edge.ts).
app.route("/", oauthRoutes);
app.route("/", oauthClientRoutes);

app.notFound((c) =>
  c.json({ ok: false, error: { code: "not_found", message: `No route for ${c.req.method} ${new URL(c.req.url).pathname}`, hint: "MCP clients connect to POST /mcp.", retryable: false } }, 404),
);

// Nothing thrown reaches the client as a stack trace.
app.onError((err, c) => {
  console.error("unhandled error", err);
  return c.json({ ok: false, error: { code: "internal_error", message: "Internal server error", hint: "Retry once; report it if it persists.", retryable: true } }, 500);
});
