import { defineConfig } from "vitest/config";

// End-to-end: a real `wrangler dev` driven by the MCP SDK client over HTTP, from Node.
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/e2e/support/global-setup.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
