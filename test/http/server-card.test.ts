/**
 * The server card (experimental Server Card extension) at /mcp/server-card and the AI Catalog at
 * /.well-known/ai-catalog.json: absent unless SERVER_CARD=on, then public (no credential, any
 * page), cacheable, and saying what a connected client is told.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { SERVER_INFO } from "../../src/server/server";
import { seedIdentity } from "../support/helpers";

async function get(path: string, setting: string | undefined, headers: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`https://ledger.example.com${path}`, { headers }), { ...env, SERVER_CARD: setting }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("the server card and the AI Catalog", () => {
  it.each([undefined, "off", "1"])("are not served with SERVER_CARD=%s", async (setting) => {
    for (const path of ["/mcp/server-card", "/.well-known/ai-catalog.json"]) expect((await get(path, setting)).status, path).toBe(404);
  });

  it("serves the card without a credential, to any page, with the extension's media type", async () => {
    const res = await get("/mcp/server-card", "on", { Origin: "https://directory.example.org", Accept: "application/mcp-server-card+json" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/mcp-server-card+json");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    const card = (await res.json()) as Record<string, unknown> & { remotes: Array<Record<string, unknown>> };
    expect(card).toMatchObject({
      $schema: "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
      name: "com.example.ledger/agent-ledger",
      version: SERVER_INFO.version,
      title: SERVER_INFO.title,
    });
    // The schema's own bounds (v1): name pattern and length, description at most 100 characters.
    expect(card.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect((card.description as string).length).toBeLessThanOrEqual(100);
    expect(card.remotes).toHaveLength(1);
    expect(card.remotes[0]).toMatchObject({ type: "streamable-http", url: "https://ledger.example.com/mcp" });
    expect(card.remotes[0]!.supportedProtocolVersions).toEqual(expect.arrayContaining(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]));
    expect(card.icons).toEqual([{ src: "https://ledger.example.com/icons/agent-ledger.svg", mimeType: "image/svg+xml", sizes: ["any"] }]);
  });

  it("names the card in the catalog, on the origin the request reached", async () => {
    const res = await get("/.well-known/ai-catalog.json", "on");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/ai-catalog+json");
    expect(await res.json()).toEqual({
      specVersion: "1.0",
      entries: [{ identifier: "urn:air:ledger.example.com:mcp:agent-ledger", type: "application/mcp-server-card+json", url: "https://ledger.example.com/mcp/server-card" }],
    });
  });

  it("says what server/discover says once connected: the revisions, the version, the title and the icons", async () => {
    const ctx = createExecutionContext();
    const me = await seedIdentity("card-discover", "agent");
    const res = await worker.fetch(
      new Request("https://ledger.example.com/mcp", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${me.key}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2026-07-28",
          "Mcp-Method": "server/discover",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "server/discover",
          params: {
            _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} },
          },
        }),
      }),
      { ...env, SERVER_CARD: "on" },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const discovered = (await res.json()) as { result: { supportedVersions: string[]; _meta?: Record<string, { name: string; version: string }> } };
    const card = (await (await get("/mcp/server-card", "on")).json()) as { version: string; title: string; icons: unknown; remotes: Array<{ supportedProtocolVersions: string[] }> };
    expect(discovered.result.supportedVersions.every((v) => card.remotes[0]!.supportedProtocolVersions.includes(v))).toBe(true);
    const info = discovered.result._meta!["io.modelcontextprotocol/serverInfo"]!;
    expect({ version: info.version, title: (info as { title?: string }).title, icons: (info as { icons?: unknown }).icons }).toEqual({ version: card.version, title: card.title, icons: card.icons });
  });
});
