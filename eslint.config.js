import js from "@eslint/js";
import tseslint from "typescript-eslint";

// The floors of the house (DESIGN.md: Code layout). The ground floor (src/core) names nothing above
// it; the catalog (src/server) is the one place that gathers the domains' tool lists; only the
// Worker's entries (index, app, the HTTP routes, the scheduled jobs) reach up to the server.
const GROUND = {
  regex: String.raw`^\.\./(?!db(/|$)|env$)`,
  message: "src/core is the ground floor: it imports only src/core, src/db and src/env. Inject what a domain provides (see src/core/catalog.ts).",
};
const SERVER = {
  regex: String.raw`^(\.\./)+server(/|$)`,
  message: "Only the Worker's entries (src/index.ts, src/app.ts, src/http, src/cron) import src/server. A tool that runs another goes through src/core/call.ts and src/core/catalog.ts.",
};
const TOOL_LISTS = {
  regex: String.raw`^\.\./`,
  importNamePattern: "^[a-z]\\w*Tools$",
  message: "Tool lists are gathered only by the catalog (src/server/registry.ts); a domain lists its own room's tools.",
};

export default tseslint.config(
  { ignores: ["node_modules/", ".wrangler/", "test/__toolsnaps__/", "dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      // Tests and handlers parse untyped JSON; `any` stays out of src but is tolerated in tests.
      "@typescript-eslint/no-explicit-any": "error",
      "no-console": ["error", { allow: ["error", "warn", "info"] }],
    },
  },
  {
    files: ["src/core/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [GROUND] }] },
  },
  {
    files: ["src/**"],
    ignores: ["src/core/**", "src/server/**", "src/index.ts", "src/app.ts", "src/http/**", "src/cron/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [SERVER, TOOL_LISTS] }] },
  },
  {
    files: ["test/**", "bench/**", "scripts/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off", "no-console": "off" },
  },
);
