// npm run types:check (in npm run lint): the committed worker-configuration.d.ts is what wrangler.toml generates.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/wrangler";
import { runScript } from "./support/run-script";

describe("worker types", () => {
  let dir = "";
  let committed = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-types-"));
    committed = await readFile(path.join(ROOT, "worker-configuration.d.ts"), "utf8");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("the committed worker-configuration.d.ts is what wrangler.toml generates", () => {
    const run = runScript("worker-types.ts", ["--check"]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it("a file whose body drifted fails, naming the line and the command that fixes it (wrangler's --check compares only the header's hash)", async () => {
    expect(committed).toMatch(/\tDB: D1Database;/);
    const drifted = path.join(dir, "drifted.d.ts");
    await writeFile(drifted, committed.replace("\tDB: D1Database;", "\tDATABASE: D1Database;"));
    const run = runScript("worker-types.ts", ["--check", drifted]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/expected "\\tDB: D1Database;", found "\\tDATABASE: D1Database;"/);
    expect(run.stderr).toContain("run `npm run types`");
  });

  it("a missing binding (wrangler.toml gained one) and a missing file fail the same way", async () => {
    const short = path.join(dir, "short.d.ts");
    await writeFile(short, committed.replace(/^\tBLOBS: R2Bucket;\n/m, ""));
    expect(runScript("worker-types.ts", ["--check", short]).status).toBe(1);
    const none = runScript("worker-types.ts", ["--check", path.join(dir, "absent.d.ts")]);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("run `npm run types`");
  });
});
