/** `npm start`'s options: a second server does not fight the first for the inspector port, and the usage line is one the script accepts. */
import { createServer, type Server } from "node:net";
import { afterAll, expect, it } from "vitest";
import { DEFAULT_INSPECTOR_PORT, parseStartArgs, START_OPTIONS, USAGE, wranglerDevArgs } from "../../scripts/start-args";
import { runScript } from "./support/run-script";

const held: Server[] = [];
afterAll(() => held.forEach((s) => s.close()));

/** Holds 9229 as a first `npm start` would (or finds it already held). */
const holdDefaultInspector = () =>
  new Promise<void>((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve());
    srv.listen(DEFAULT_INSPECTOR_PORT, "127.0.0.1", () => (held.push(srv), resolve()));
  });

const argAfter = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

it("while another server holds 9229, npm start gives wrangler a free inspector port of its own", async () => {
  await holdDefaultInspector();
  const opts = await parseStartArgs([], {});
  expect(opts.inspectorPort).not.toBe(DEFAULT_INSPECTOR_PORT);
  expect(opts.inspectorPort).not.toBe(opts.port);
  expect(argAfter(wranglerDevArgs(opts, []), "--inspector-port")).toBe(String(opts.inspectorPort));
});

it("takes --inspector-port or $INSPECTOR_PORT as given, and refuses a port that is not one or is the server's", async () => {
  expect(argAfter(wranglerDevArgs(await parseStartArgs(["--inspector-port", "9400"], {}), []), "--inspector-port")).toBe("9400");
  expect((await parseStartArgs([], { INSPECTOR_PORT: "9401" })).inspectorPort).toBe(9401);
  await expect(parseStartArgs(["--inspector-port", "70000"], {})).rejects.toThrow(/--inspector-port 8788 or INSPECTOR_PORT=8788/);
  await expect(parseStartArgs(["--port", "9402", "--inspector-port", "9402"], {})).rejects.toThrow(/is the port the server listens on/);
});

it("the usage line lists exactly the options the script takes, and its form, filled in, is accepted", async () => {
  const listed = [...USAGE.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]);
  expect(listed.sort()).toEqual(
    Object.keys(START_OPTIONS)
      .filter((o) => o !== "help")
      .sort(),
  );
  // `npm start -- A B` hands the script `A B`: the first `--` is npm's, any other would end the options.
  const synopsis = USAGE.split("\n")[0]!
    .replace(/^usage: npm start /, "")
    .replace(/[[\]]/g, " ")
    .trim()
    .split(/\s+/);
  expect(synopsis[0]).toBe("--");
  let next = 9403;
  const argv = synopsis.slice(1).map((t) => (t === "<n>" ? String(next++) : t === "<dir>" ? "state" : t));
  await expect(parseStartArgs(argv, {})).resolves.toMatchObject({ port: 9403, inspectorPort: 9404, persistTo: "state" });
});

it("npm start --help prints that usage line", () => {
  const run = runScript("start.ts", ["--help"]);
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout.trim()).toBe(USAGE);
});
