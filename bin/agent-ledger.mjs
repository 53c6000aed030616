#!/usr/bin/env node
// The packed package runs the bundle built at pack time; a clone without one runs the sources
// through tsx (a dev dependency of the clone).
import { existsSync } from "node:fs";
import { URL, fileURLToPath, pathToFileURL } from "node:url";

const bundle = fileURLToPath(new URL("../dist/cli.mjs", import.meta.url));
if (existsSync(bundle)) await import(pathToFileURL(bundle).href);
else {
  const { tsImport } = await import("tsx/esm/api");
  await tsImport("../src/cli/index.ts", import.meta.url);
}
