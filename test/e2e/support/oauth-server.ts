/**
 * What the OAuth end-to-end and browser tests need from the shared `wrangler dev` (global-setup.ts):
 * short-lived access tokens, and an https server on loopback publishing a Client ID Metadata
 * Document. Its self-signed certificate is trusted through NODE_EXTRA_CA_CERTS, which wrangler
 * hands to workerd, so the provider fetches the document as it would in production.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import path from "node:path";
import { freePort } from "../../../scripts/dev-server";

export const ACCESS_TOKEN_TTL_SECONDS = 60;
/** The loopback callback every e2e OAuth client registers (nothing listens: the tests read the redirect). */
export const E2E_REDIRECT = "http://127.0.0.1:47615/callback";

export interface CimdHost {
  certFile: string;
  clientId: string;
  stop(): Promise<void>;
}

export async function startCimdHost(stateDir: string): Promise<CimdHost> {
  const certFile = path.join(stateDir, "cert.pem");
  const keyFile = path.join(stateDir, "key.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", keyFile, "-out", certFile],
    { stdio: "ignore" },
  );
  const port = await freePort();
  const clientId = `https://localhost:${port}/oauth/client.json`;
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
    if (req.url !== "/oauth/client.json") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-store" });
    res.end(JSON.stringify({ client_id: clientId, client_name: "E2E CIMD client", redirect_uris: [E2E_REDIRECT], token_endpoint_auth_method: "none" }));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { certFile, clientId, stop: () => new Promise((r) => server.close(() => r())) };
}
