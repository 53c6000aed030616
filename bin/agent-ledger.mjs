#!/usr/bin/env node
// In a clone the sources run through tsx (a dev dependency there), so the command is never a stale
// build; the packed package has no sources and runs the bundle built when it was packed.
import { existsSync } from "node:fs";
import { URL, fileURLToPath, pathToFileURL } from "node:url";

const source = new URL("../src/cli/index.ts", import.meta.url);
if (existsSync(fileURLToPath(source))) {
  const { tsImport } = await import("tsx/esm/api");
  await tsImport(source.href, import.meta.url);
} else await import(pathToFileURL(fileURLToPath(new URL("../dist/cli.mjs", import.meta.url))).href);
