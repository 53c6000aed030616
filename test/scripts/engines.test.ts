/**
 * `engines` says what runs the project's code (the pinned Node 24 in node_modules/.bin), every installed
 * package agrees with it, and a fresh `npm ci` on the machine's Node prints no warnings about it.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { ROOT } from "../../scripts/wrangler";

// semver comes with npm's own toolchain (a transitive devDependency); only these two calls are needed.
const semver = createRequire(import.meta.url)("semver") as { satisfies(v: string, r: string): boolean; subset(a: string, b: string): boolean };

const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), "utf8"));
const pkg = read("package.json") as { engines: { node: string }; devDependencies: Record<string, string>; devEngines: { runtime: { name: string; version: string } } };
const lock = read("package-lock.json") as { packages: Record<string, { version?: string; optional?: boolean; engines?: { node?: string } }> };

// npm warns only for packages it installs whatever the platform; optional ones it skips silently.
const required = Object.entries(lock.packages).filter(([where, p]) => where !== "" && !p.optional && p.engines?.node);

it("every Node that engines accepts runs every installed package, and the pinned Node is one of them", () => {
  expect(semver.satisfies(pkg.devDependencies.node!, pkg.engines.node)).toBe(true);
  const refused = required.filter(([, p]) => !semver.subset(pkg.engines.node, p.engines!.node!)).map(([where, p]) => `${where} ${p.engines!.node}`);
  expect(refused).toEqual([]);
  // The Node that runs npm itself is devEngines' business, not engines'.
  expect(pkg.devEngines.runtime.name).toBe("node");
});

const dir = mkdtempSync(path.join(tmpdir(), "agent-ledger-engines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("npm ci on the machine's Node (not the pinned one) prints no warning", () => {
  for (const f of ["package.json", "package-lock.json", ".npmrc"]) copyFileSync(path.join(ROOT, f), path.join(dir, f));
  // npm scripts put node_modules/.bin (the pinned Node) first on PATH; a user's `npm ci` does not have it.
  const PATH = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((p) => !p.endsWith(path.join("node_modules", ".bin")))
    .join(path.delimiter);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("npm_")) delete env[k];
  const run = spawnSync("npm", ["ci", "--dry-run", "--ignore-scripts", "--offline"], { cwd: dir, env: { ...env, PATH }, encoding: "utf8", timeout: 60_000 });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stderr).not.toMatch(/npm warn/i);
  expect(run.stdout).not.toMatch(/EBADENGINE/);
});
