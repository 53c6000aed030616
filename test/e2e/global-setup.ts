/**
 * Starts `wrangler dev` against fresh local state, with keys made by the `keys` command
 * exactly as a user makes them, and stops it (and workerd) afterwards.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startDevServer, type DevServer } from "../../scripts/dev-server";
import { applyMigrations, createKeyWithCommand } from "../../scripts/wrangler";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    keyA: string;
    keyB: string;
    /** More actors in keyA's tenant, for claim races. */
    raceKeys: string[];
  }
}

let server: DevServer | undefined;
let stateDir = "";

export async function setup(project: TestProject): Promise<void> {
  stateDir = await mkdtemp(path.join(tmpdir(), "agent-ledger-e2e-"));
  const persistTo = path.join(stateDir, "state");
  // A private config home keeps wrangler from writing into the user's home folder.
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", XDG_CONFIG_HOME: path.join(stateDir, "config") };
  await applyMigrations({ persistTo, env });
  project.provide("keyA", await createKeyWithCommand("e2e-a", "claude-code", { persistTo, env }));
  project.provide("keyB", await createKeyWithCommand("e2e-b", "cursor", { persistTo, env }));
  // One at a time: concurrent writers to the local database get SQLITE_BUSY.
  const racers: string[] = [];
  for (const actor of ["racer-1", "racer-2", "racer-3", "racer-4"]) racers.push(await createKeyWithCommand("e2e-a", actor, { persistTo, env }));
  project.provide("raceKeys", racers);
  server = await startDevServer({ persistTo, env });
  project.provide("baseUrl", server.baseUrl);
}

export async function teardown(): Promise<void> {
  server?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}
