/**
 * Runs an operator script as a user would (`tsx scripts/<name>.ts …`) and returns its exit status
 * and output. A run is given a deadline and, if it passes it, one more try: a CI run once hung for
 * minutes after tsx's esbuild service died (left a zombie, tsx waiting on it), which a synchronous
 * spawn without a deadline turns into a suite that never ends instead of a failure.
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import path from "node:path";
import { ROOT } from "../../../scripts/wrangler";

const DEADLINE_MS = 45_000;

export function runScript(script: string, args: string[] = []): SpawnSyncReturns<string> {
  const once = () =>
    spawnSync(path.join(ROOT, "node_modules", ".bin", "tsx"), [path.join(ROOT, "scripts", script), ...args], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: DEADLINE_MS,
      killSignal: "SIGKILL",
    });
  const first = once();
  return first.signal === "SIGKILL" ? once() : first;
}
