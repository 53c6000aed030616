/** Connecting a test tenant to the fake GitHub: a stored token, and a ctx whose env points at the fake. */
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { encryptToken } from "../../../src/git/credentials";
import type { Ctx } from "../../../src/core/context";
import type { FakeGitHub } from "./fake";

export const TEST_CREDENTIALS_KEY = "test-credentials-key-0123456789abcdef";

/**
 * Stores a token for the ctx's tenant, routes every outbound fetch to `gh` (anything GitHub's
 * description does not allow fails the test), and returns a ctx whose env names the fake API.
 */
export async function connectGitHub(ctx: Ctx, gh: FakeGitHub, token = "ghp_test_token"): Promise<Ctx> {
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT INTO github_credentials (tenant_id, kind, secret, created_at, updated_at) VALUES (?, 'token', ?, ?, ?)
     ON CONFLICT (tenant_id) DO UPDATE SET kind = 'token', secret = excluded.secret, updated_at = excluded.updated_at`,
  )
    .bind(ctx.tenantId, await encryptToken(token, ctx.tenantId, TEST_CREDENTIALS_KEY), now, now)
    .run();
  vi.spyOn(globalThis, "fetch").mockImplementation(gh.fetch);
  return { ...ctx, env: { ...ctx.env, GITHUB_API_URL: gh.apiBase, GITHUB_CREDENTIALS_KEY: TEST_CREDENTIALS_KEY } };
}
