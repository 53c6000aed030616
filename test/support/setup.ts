import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, vi } from "vitest";
import { IMPORT_GRAMMARS, loadImportGrammar } from "../../src/code/parse/read-imports";

// Migrations are idempotent; every test file starts from a migrated database.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// The docs graph reads imports synchronously (extractGraph) with grammars that load asynchronously;
// ingest loads them first (indexGraph awaits loadGraphGrammar), and tests that call extractGraph
// directly find them loaded here.
await Promise.all(IMPORT_GRAMMARS.map(loadImportGrammar));

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
