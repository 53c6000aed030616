import { defineConfig } from "vitest/config";

// The operator scripts (npm start, keys, setup:cloud) and the command line run as a user runs them, from Node.
export default defineConfig({
  test: {
    include: ["test/scripts/**/*.test.ts", "test/cli/**/*.test.ts"],
    environment: "node",
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 60_000,
  },
});
