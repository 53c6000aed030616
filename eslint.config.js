import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".wrangler/", "test/__toolsnaps__/"] },
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
    files: ["test/**", "bench/**", "scripts/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off", "no-console": "off" },
  },
);
