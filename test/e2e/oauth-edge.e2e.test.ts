/**
 * Against `wrangler dev` (which, unlike production, can reach loopback): no request to /authorize or
 * the token endpoint makes the server connect to a loopback listener named as a client id.
 */
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { authorizeUrl, pkcePair, tokenRequest } from "../support/oauth-flow";
import { E2E_REDIRECT } from "./support/oauth-server";

let listener: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

describe("client metadata documents on loopback (wrangler dev)", () => {
  it("GET /authorize and POST /oauth/token with a loopback client id never connect to it", async () => {
    const base = inject("baseUrl");
    const { challenge } = await pkcePair();
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `2130706433:${port}`, `0x7f.0.0.1:${port}`]) {
      const clientId = `https://${host}/client.json`;
      const page = await fetch(authorizeUrl(base, { clientId, redirectUri: E2E_REDIRECT, challenge }), { redirect: "manual" });
      expect(page.status, clientId).toBe(400);
      expect(await page.text()).toContain("App not verified");
      const token = await tokenRequest(fetch, base, { grant_type: "refresh_token", refresh_token: "u:g:x", client_id: clientId });
      expect(token.status, clientId).toBe(401);
      expect(await token.json()).toMatchObject({ error: "invalid_client" });
    }
    expect(connections).toBe(0);
  });
});
