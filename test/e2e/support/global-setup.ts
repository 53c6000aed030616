/**
 * Starts `wrangler dev` against fresh local state, with keys made by the `keys` command
 * exactly as a user makes them, and stops it (and workerd) afterwards.
 */
import type { TestProject } from "vitest/node";
import { freePort, startDevServer, type DevServer } from "../../../scripts/dev-server";
import { createKeyWithCommand, createLocalState, keysCommand, querySql, type LocalState } from "../../../scripts/wrangler";
import { ACCESS_TOKEN_TTL_SECONDS, startCimdHost, type CimdHost } from "./oauth-server";
import { encryptToken } from "../../../src/git/credentials";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    /** The command line's (cli.e2e.test.ts) and the dashboard's (dashboard.e2e.test.ts) own tenants. */
    cliKey: string;
    dashKey: string;
    keyA: string;
    keyB: string;
    /** More actors in keyA's tenant, for claim races. */
    raceKeys: string[];
    /** A key of tenant e2e-limited, whose keys the rate-limit command holds to LIMITED_KEY_PER_MIN a minute. */
    limitedKey: string;
    limitedKeyPerMin: number;
    /** The loopback port wrangler dev's GITHUB_API_URL points at; git.e2e.test.ts serves the fake GitHub there. */
    githubPort: number;
    /** OAuth (oauth.e2e.test.ts, oauth-browser.e2e.test.ts): keys of tenant e2e-oauth and the CIMD client's id. */
    oauthKey: string;
    oauthOperatorKey: string;
    cimdClientId: string;
    /** Where the server's local state lives, for the operator commands (`npm run oauth`). */
    persistTo: string;
    configHome: string;
  }
}

let server: DevServer | undefined;
let state: LocalState | undefined;
let cimd: CimdHost | undefined;

export async function setup(project: TestProject): Promise<void> {
  state = await createLocalState("e2e");
  const { persistTo, env } = state.target;
  project.provide("keyA", await createKeyWithCommand("e2e-a", "claude-code", { persistTo, env }));
  project.provide("keyB", await createKeyWithCommand("e2e-b", "cursor", { persistTo, env }));
  // The command line's and the dashboard's tests seed tenants of their own, so counts elsewhere stay put.
  project.provide("cliKey", await createKeyWithCommand("e2e-cli", "claude-code", { persistTo, env }));
  project.provide("dashKey", await createKeyWithCommand("e2e-dash", "ada", { persistTo, env }));
  // One at a time: concurrent writers to the local database get SQLITE_BUSY.
  const racers: string[] = [];
  for (const actor of ["racer-1", "racer-2", "racer-3", "racer-4"]) racers.push(await createKeyWithCommand("e2e-a", actor, { persistTo, env }));
  project.provide("raceKeys", racers);
  // Throttling is tested on a tenant of its own, set the way an operator would; every other key keeps the defaults.
  const limitedKeyPerMin = 4;
  project.provide("limitedKey", await createKeyWithCommand("e2e-limited", "agent", { persistTo, env }));
  await keysCommand(["rate-limit", "--tenant", "e2e-limited", "--key-per-min", String(limitedKeyPerMin), "--quiet"], { persistTo, env });
  project.provide("limitedKeyPerMin", limitedKeyPerMin);
  // Tenant e2e-a is connected to GitHub (a fake one on loopback); e2e-b is not.
  const githubPort = await freePort();
  const credentialsKey = "e2e-credentials-key-0123456789abcdef";
  const [tenantA] = await querySql<{ id: string }>("SELECT id FROM tenants WHERE slug = 'e2e-a'", { persistTo, env });
  const secret = await encryptToken("ghp_e2e_token", tenantA!.id, credentialsKey);
  await querySql(`INSERT INTO github_credentials (tenant_id, kind, secret, created_at, updated_at) VALUES ('${tenantA!.id}', 'token', '${secret}', 'now', 'now')`, { persistTo, env });
  // e2e-a's own repository webhooks are signed with this secret (stored encrypted, as `npm run github -- set-webhook-secret` does).
  const hookSecret = await encryptToken("e2e-webhook-secret", tenantA!.id, credentialsKey);
  await querySql(`INSERT INTO github_webhook_secrets (tenant_id, secret, created_at, updated_at) VALUES ('${tenantA!.id}', '${hookSecret}', 'now', 'now')`, { persistTo, env });
  project.provide("githubPort", githubPort);
  project.provide("oauthKey", await createKeyWithCommand("e2e-oauth", "hosted", { persistTo, env }));
  project.provide("oauthOperatorKey", await keysCommand(["create", "--tenant", "e2e-oauth", "--actor", "boss", "--operator", "--quiet"], { persistTo, env }).then((o) => o.trim()));
  project.provide("persistTo", persistTo);
  project.provide("configHome", env.XDG_CONFIG_HOME!);
  cimd = await startCimdHost(state.dir);
  project.provide("cimdClientId", cimd.clientId);
  server = await startDevServer({
    persistTo,
    env: { ...env, NODE_EXTRA_CA_CERTS: cimd.certFile },
    vars: {
      GITHUB_API_URL: `http://127.0.0.1:${githubPort}`,
      GITHUB_CREDENTIALS_KEY: credentialsKey,
      OAUTH_ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL_SECONDS),
      OAUTH_CIMD_LOCAL_ORIGINS: new URL(cimd.clientId).origin,
      // Development only: the coordination test's webhook receiver listens on loopback.
      OUTBOUND_HOOKS_ALLOW_PRIVATE: "1",
    },
  });
  project.provide("baseUrl", server.baseUrl);
}

export async function teardown(): Promise<void> {
  server?.stop();
  await cimd?.stop();
  await state?.dispose();
}
