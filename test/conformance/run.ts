/**
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against `wrangler dev`
 * on throwaway local state, and judges the results against expected-failures.yml.
 *
 *   npm run test:conformance [-- --out <dir>] [-- --only <scenario>]
 *
 * Each scenario runs in its own suite process (four at a time), so one that crashes or hangs costs
 * only itself. Results go to <out>/results.json and <out>/results.md (default .conformance/). The run fails when
 * a scenario not in the list fails, and when a listed one passes, so the list only shrinks.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { freePort, startDevServer, type DevServer } from "../../scripts/dev-server";
import { createKeyWithCommand, createLocalState, ROOT, type LocalState } from "../../scripts/wrangler";
import { startBearerProxy, type BearerProxy } from "./bearer-proxy";
import { Browser, decide, registerClient, signInWithKey } from "../support/oauth-flow";
import { judge, oneLine, outcomeOf, parseExpectedFailures, renderTable, type Check, type ScenarioResult } from "./baseline";

const SUITE = path.join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const EXPECTED_FILE = path.join(import.meta.dirname, "expected-failures.yml");
/** A scenario's own requests time out at 30 s inside the suite; past this the process is stuck. */
const SCENARIO_DEADLINE_MS = 120_000;

/** Suite processes at once: each spends most of its time starting Node and waiting on the server. */
const PARALLEL = 4;

const CURRENT = "2026-07-28";
const PREVIOUS = "2025-11-25";
/** The authorization-server scenarios run in one suite process: the code grant reads the metadata the first one fetched. */
const AUTHORIZATION = ["authorization-server-metadata-endpoint", "authorization-code-grant"];

/**
 * revision → the server scenarios run at it, as the suite lists them: every scenario the revision
 * requires and, at the current one, the pending and extension scenarios it ships (skills, tasks).
 */
/** Extension scenarios are off the spec's timeline, so the suite runs them only when forced. */
const EXTENSIONS = new Set<string>();

async function plan(): Promise<Map<string, string[]>> {
  const planned = new Map<string, string[]>();
  for (const revision of [CURRENT, PREVIOUS]) {
    const listed = await suiteOutput(["list", "--server", "--requirements", revision]);
    const serverPart = listed.slice(listed.indexOf("Server scenarios"), listed.indexOf("Client scenarios"));
    const required = [...serverPart.matchAll(/^ {2}- ([a-z0-9-]+)$/gm)].map((m) => m[1]!);
    if (required.length === 0) throw new Error(`the suite listed no server scenarios for ${revision}:\n${listed}`);
    if (revision !== CURRENT) {
      planned.set(revision, required);
      continue;
    }
    // "Run and reported, but never scored": the pending scenarios and the tasks extension's.
    const unscored = [...listed.matchAll(/^ {4}- ([a-z0-9-]+) \[server\]$/gm)].map((m) => m[1]!);
    const extensions = [...(await suiteOutput(["list", "--server"])).matchAll(/^ {2}- ([a-z0-9-]+) \[extension\]$/gm)].map((m) => m[1]!);
    for (const e of extensions) EXTENSIONS.add(e);
    planned.set(revision, [...new Set([...required, ...unscored, ...extensions]), ...AUTHORIZATION]);
  }
  return planned;
}

/** Runs a suite command that must succeed (`list`) and returns what it printed. */
async function suiteOutput(args: string[]): Promise<string> {
  const run = await runSuite(args);
  if (run.code !== 0) throw new Error(`conformance ${args.join(" ")} exited ${run.code}${run.timedOut ? " (timed out)" : ""}:\n${run.output}`);
  return run.output;
}

interface SuiteRun {
  code: number | null;
  output: string;
  timedOut: boolean;
}

/**
 * Runs the suite to completion (a failing scenario exits 1, which is a result, not an error).
 * `watch` sees everything printed so far, each time more arrives.
 */
function runSuite(args: string[], watch?: (output: string) => void): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SUITE, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let timedOut = false;
    child.stdout.on("data", (d) => {
      output += d;
      watch?.(output);
    });
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, SCENARIO_DEADLINE_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output, timedOut });
    });
  });
}

/** The checks.json the suite wrote for a scenario (in `<kind>-<scenario>-<timestamp>/`), if it wrote one. */
async function readChecks(dir: string, kind: string, scenario: string): Promise<Check[] | undefined> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  const folder = entries.find((e) => e.startsWith(`${kind}-${scenario}-`));
  if (!folder) return undefined;
  const text = await readFile(path.join(dir, folder, "checks.json"), "utf8").catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as Check[]);
}

function errorResult(scenario: string, revision: string, run: SuiteRun, seconds: number): ScenarioResult {
  const tail = run.output.trim().split("\n").slice(-3).join(" ");
  const detail = run.timedOut ? `the suite did not finish within ${SCENARIO_DEADLINE_MS / 1000} s` : `the suite wrote no results (exit ${run.code}): ${tail}`;
  return { scenario, revision, outcome: "error", passed: 0, failed: 0, warnings: 0, detail: oneLine(detail), seconds };
}

async function runServerScenario(mcpUrl: string, revision: string, scenario: string, work: string): Promise<ScenarioResult> {
  const dir = await mkdtemp(path.join(work, "s-"));
  const started = Date.now();
  const run = await runSuite(["server", "--url", mcpUrl, "--scenario", scenario, "--spec-version", revision, "-o", dir, ...(EXTENSIONS.has(scenario) ? ["--force"] : [])]);
  const seconds = (Date.now() - started) / 1000;
  await writeFile(path.join(dir, "output.txt"), run.output);
  // An inapplicable scenario is skipped with exit 0 and no results; the plan must not ask for one.
  if (/^SKIPPED: scenario/m.test(run.output)) throw new Error(`the suite skipped ${scenario} at ${revision}: ${oneLine(run.output)}`);
  const checks = await readChecks(dir, "server", scenario);
  return checks ? { scenario, revision, ...outcomeOf(checks), seconds } : errorResult(scenario, revision, run, seconds);
}

/**
 * The authorization-server scenarios, against the server's own origin (the issuer) rather than the
 * proxy: OAuth endpoints take no API key. The code grant needs a client registered for the suite's
 * loopback callback, and a person to sign in at the URL it prints: the runner registers one through
 * dynamic client registration and signs in as that person would, with the API key and the consent
 * form (test/oauth-flow.ts), so the suite's callback receives a real authorization response.
 */
async function runAuthorization(issuer: string, key: string, revision: string, work: string): Promise<ScenarioResult[]> {
  const dir = await mkdtemp(path.join(work, "a-"));
  const started = Date.now();
  const port = await freePort();
  const registered = await registerClient(fetch, issuer, {
    client_name: "MCP conformance suite",
    redirect_uris: [`http://127.0.0.1:${port}/callback`],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  });
  if (registered.status !== 201) throw new Error(`registering the suite's client answered ${registered.status}: ${await registered.text()}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  let signIn: Promise<string | null> | undefined;
  const run = await runSuite(["authorization", "--url", issuer, "--spec-version", revision, "-o", dir, "--client-id", clientId, "--port", String(port), "--resource", `${issuer}/mcp`], (output) => {
    const url = /^(https?:\/\/\S+\/authorize\?\S+)$/m.exec(output)?.[1];
    if (url && !signIn)
      signIn = signInAsPerson(issuer, url, key).then(
        () => null,
        (err: unknown) => String(err),
      );
  });
  const signInError = signIn ? await signIn : "the suite printed no authorization URL";
  await writeFile(path.join(dir, "output.txt"), `${run.output}${signInError ? `\nsign-in: ${signInError}\n` : ""}`);
  const seconds = (Date.now() - started) / 1000 / AUTHORIZATION.length;
  const results: ScenarioResult[] = [];
  for (const scenario of AUTHORIZATION) {
    const checks = await readChecks(dir, "authorization-server", scenario);
    results.push(checks ? { scenario, revision, ...outcomeOf(checks), seconds } : errorResult(scenario, revision, run, seconds));
  }
  return results;
}

/** The person at the browser: signs in with the API key, allows, and follows the redirect to the suite's callback. */
async function signInAsPerson(issuer: string, authorizeUrl: string, key: string): Promise<void> {
  const browser = new Browser((url, init) => fetch(url, init));
  const consent = await signInWithKey(browser, authorizeUrl, key);
  if (consent.status !== 200) throw new Error(`sign-in answered ${consent.status}: ${oneLine(await consent.text())}`);
  const callback = await decide(browser, issuer, await consent.text(), "allow");
  const delivered = await fetch(callback);
  if (!delivered.ok) throw new Error(`the suite's callback answered ${delivered.status}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string", default: path.join(ROOT, ".conformance") }, only: { type: "string", multiple: true } } });
  const major = Number(process.versions.node.split(".")[0]);
  // The suite uses Node 22 APIs; npm scripts run on the node devDependency, a bare `tsx` may not.
  if (major < 22) throw new Error(`the conformance suite needs Node 22 or later; this is ${process.version} (run it with npm run test:conformance)`);
  const planned = await plan();
  const expected = parseExpectedFailures(await readFile(EXPECTED_FILE, "utf8"), planned);
  const only = values.only ? new Set(values.only) : undefined;

  const out = path.resolve(values.out);
  await rm(out, { recursive: true, force: true });
  const work = path.join(out, "suite");
  await mkdir(work, { recursive: true });

  let state: LocalState | undefined;
  let server: DevServer | undefined;
  let proxy: BearerProxy | undefined;
  const results: ScenarioResult[] = [];
  try {
    state = await createLocalState("conformance");
    const key = await createKeyWithCommand("conformance", "conformance-suite", state.target);
    // Limits off: several suite processes at once are a test run, not abuse, and a 429 would read as a failure.
    // The fixtures are the suite's reference tools, prompts and resources, served on loopback only.
    server = await startDevServer({ persistTo: state.target.persistTo, env: state.target.env, vars: { RATE_LIMIT_KEY_PER_MIN: "0", RATE_LIMIT_TENANT_PER_MIN: "0", CONFORMANCE_FIXTURES: "1" } });
    proxy = await startBearerProxy(server.baseUrl, key);
    const mcpUrl = `${proxy.url}/mcp`;
    console.log(`conformance suite on Node ${process.version} against ${mcpUrl} (wrangler dev at ${server.baseUrl})`);

    const jobs: Array<() => Promise<ScenarioResult[]>> = [];
    const logged = (rs: ScenarioResult[]) => {
      for (const r of rs) console.log(`${r.outcome.padEnd(7)} ${r.revision} ${r.scenario} (${r.seconds.toFixed(1)} s)${r.detail ? `: ${r.detail}` : ""}`);
      return rs;
    };
    for (const [revision, scenarios] of planned) {
      for (const scenario of scenarios) {
        if (AUTHORIZATION.includes(scenario) || (only && !only.has(scenario))) continue;
        jobs.push(async () => logged([await runServerScenario(mcpUrl, revision, scenario, work)]));
      }
      const issuer = server.baseUrl;
      if (scenarios.some((s) => AUTHORIZATION.includes(s)) && (!only || AUTHORIZATION.some((s) => only.has(s)))) jobs.push(async () => logged(await runAuthorization(issuer, key, revision, work)));
    }
    results.push(...(await inParallel(jobs, PARALLEL)).flat());
  } finally {
    await proxy?.close();
    server?.stop();
    await state?.dispose();
  }

  const verdict = judge(results, expected);
  const table = renderTable(results, expected, verdict);
  await writeFile(path.join(out, "results.json"), JSON.stringify({ suite: await suiteVersion(), node: process.version, results, verdict: summary(verdict) }, null, 2));
  await writeFile(path.join(out, "results.md"), `# MCP conformance\n\n${table}\n`);
  console.log(`\n${table}\n\nresults: ${path.relative(ROOT, out) || out}/results.{json,md}`);
  for (const r of verdict.unexpected) console.error(`unexpected failure: ${r.scenario} at ${r.revision}: ${r.detail ?? r.outcome}`);
  for (const r of verdict.stale) console.error(`now passing, remove it from ${path.relative(ROOT, EXPECTED_FILE)}: ${r.scenario} at ${r.revision}`);
  if (!verdict.ok) process.exitCode = 1;
}

/** Runs the jobs, at most `limit` at a time, and returns their results in the jobs' order. */
async function inParallel<T>(jobs: ReadonlyArray<() => Promise<T>>, limit: number): Promise<T[]> {
  const results = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

const summary = (v: ReturnType<typeof judge>) => ({
  ok: v.ok,
  unexpected: v.unexpected.map((r) => `${r.revision} ${r.scenario}`),
  stale: v.stale.map((r) => `${r.revision} ${r.scenario}`),
  expected: v.expected.map((r) => `${r.revision} ${r.scenario}`),
});

async function suiteVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(path.dirname(SUITE), "..", "package.json"), "utf8")) as { version: string };
  return pkg.version;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
