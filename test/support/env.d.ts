// Bindings come from worker-configuration.d.ts (npm run types) and settings from src/env.ts;
// this adds only what the test pool binds (vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
