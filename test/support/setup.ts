import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, vi } from "vitest";

// Migrations are idempotent; every test file starts from a migrated database.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// No test may reach the network: any outbound fetch that a test did not stub fails it.
// Requests to the worker under test go through SELF/exports, not globalThis.fetch.
beforeEach(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    const url = input instanceof Request ? input.url : String(input);
    throw new Error(`Unexpected outbound request in a test: ${url}`);
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});
