/**
 * Bundles the command line into one file (dist/cli.mjs) for the packed package: it then needs no
 * dependency at run time, starts fast, and runs on any Node from 20 on.
 */
import { build } from "esbuild";
import { readFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

await build({
  entryPoints: ["src/cli/index.ts"],
  outfile: "dist/cli.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  legalComments: "linked",
  define: { __CLI_VERSION__: JSON.stringify(version) },
  // Bundled CommonJS dependencies call require(); ESM output gives them one.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  logLevel: "warning",
});
console.info(`dist/cli.mjs (agent-ledger ${version})`);
