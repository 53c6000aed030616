/**
 * The server described before anyone connects (the experimental Server Card extension, SEP-2127):
 * its card at `GET /mcp/server-card` (the location the extension reserves: the Streamable HTTP URL
 * plus `/server-card`) and an AI Catalog at `GET /.well-known/ai-catalog.json` pointing to it, so a
 * directory that knows only the host can find the endpoint, its transport and its revisions. Both
 * are public (nothing of a tenant is in them) and served only with `SERVER_CARD=on`, while the
 * extension is experimental. The card repeats what `server/discover` says once connected.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import type { Context } from "hono";
import { canonicalOrigin, MCP_PATH } from "../auth/oauth";
import type { Env } from "../env";
import { serverIcons } from "../server/icons";
import { SERVER_INFO } from "../server/server";

export const SERVER_CARD_PATH = `${MCP_PATH}/server-card`;
export const AI_CATALOG_PATH = "/.well-known/ai-catalog.json";

const CARD_TYPE = "application/mcp-server-card+json";

/** The revisions served: 2026-07-28 (stateless) and the 2025 ones with sessions. */
const REVISIONS = ["2026-07-28", ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v >= "2025-03-26")];

export const serverCardOn = (env: Pick<Env, "SERVER_CARD">): boolean => env.SERVER_CARD === "on";

/** `example.com` → `com.example`: the card's reverse-DNS namespace. */
const reversed = (host: string) => host.split(".").reverse().join(".");

export function serverCard(origin: string): Record<string, unknown> {
  const host = new URL(origin).hostname;
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
    name: `${reversed(host)}/${SERVER_INFO.name}`,
    version: SERVER_INFO.version,
    title: SERVER_INFO.title,
    description: "A coding team's shared memory and coordination point: changes, tasks, decisions, docs, code.",
    icons: serverIcons(origin),
    remotes: [
      {
        type: "streamable-http",
        url: `${origin}${MCP_PATH}`,
        headers: [
          {
            name: "Authorization",
            description: "Bearer and an API key (alk_…). A client that speaks MCP authorization signs in with OAuth instead (the 401 names the metadata).",
            isRequired: false,
            isSecret: true,
          },
        ],
        supportedProtocolVersions: REVISIONS,
      },
    ],
  };
}

export function aiCatalog(origin: string): Record<string, unknown> {
  const host = new URL(origin).hostname;
  return {
    specVersion: "1.0",
    entries: [{ identifier: `urn:air:${host}:mcp:${SERVER_INFO.name}`, type: CARD_TYPE, url: `${origin}${SERVER_CARD_PATH}` }],
  };
}

type Describe = (origin: string) => Record<string, unknown>;

/** A discovery document, or 404 while the setting is off. Public and the same for everyone: cacheable for an hour. */
export const discoveryRoute = (describe: Describe, type: string) => (c: Context<{ Bindings: Env }>) => {
  if (!serverCardOn(c.env)) return c.notFound();
  const body = JSON.stringify(describe(canonicalOrigin(new URL(c.req.url))));
  return c.body(body, 200, { "Content-Type": type, "Cache-Control": "public, max-age=3600", "Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff" });
};

export const serverCardRoute = discoveryRoute(serverCard, CARD_TYPE);
export const aiCatalogRoute = discoveryRoute(aiCatalog, "application/ai-catalog+json");
