import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Unit and integration tests run inside workerd against real local D1 and Durable Objects.
export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: { bindings: { TEST_MIGRATIONS: migrations } },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      // The command line runs in Node: its tests are in the scripts config.
      exclude: ["test/e2e/**", "test/scripts/**", "test/cli/**"],
      setupFiles: ["./test/support/setup.ts"],
      reporters: ["default", "./test/support/summary-reporter.ts"],
    },
  };
});
