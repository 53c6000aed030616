/**
 * Command-line start-up (not a test): `npm run bench:cli`. A person or a command hook waits for the
 * whole process, so this times whole runs: `node -e ""` (the floor: starting Node at all),
 * `agent-ledger --version` (loading the command), `agent-ledger status` (loading, connecting,
 * listing nothing, one whoami) and a generated subcommand (`blame`, which also reads the tool
 * listing for its flags), from the packed bundle and from the sources as a clone runs them.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startBenchServer } from "./lib";

const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeRuns(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const times: number[] = [];
  await run(command, args, { env }); // warm the file cache
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run(command, args, { env });
    times.push(performance.now() - start);
  }
  return median(times);
}

async function main(): Promise<void> {
  await run("npx", ["tsx", "scripts/build-cli.ts"]);
  const server = await startBenchServer();
  const dir = await mkdtemp(join(tmpdir(), "al-bench-cli-"));
  try {
    const key = await server.key("cli", "person");
    const env = { ...process.env, AGENT_LEDGER_URL: server.base, AGENT_LEDGER_KEY: key, AGENT_LEDGER_CONFIG: join(dir, "none.json") } as NodeJS.ProcessEnv;
    const floor = await timeRuns(process.execPath, ["-e", ""], env);
    const rows: Array<[string, number]> = [["node -e '' (floor)", floor]];
    for (const [how, argv0] of [
      ["bundle", ["dist/cli.mjs"]],
      ["sources (clone)", ["bin/agent-ledger.mjs"]],
    ] as const) {
      for (const [label, args] of [
        ["--version", ["--version"]],
        ["status", ["status"]],
        ["blame src/app.ts", ["blame", "src/app.ts"]],
      ] as const)
        rows.push([`${how}: agent-ledger ${label}`, await timeRuns(process.execPath, [...argv0, ...args], env)]);
    }
    console.log(`\n## Command-line start-up, median of ${RUNS} runs\n`);
    console.log("| command | median ms | × floor |");
    console.log("|---|---|---|");
    for (const [label, ms] of rows) console.log(`| ${label} | ${ms.toFixed(0)} | ${(ms / floor).toFixed(1)} |`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.close();
  }
}

await main();
