/** What `npm start` accepts: its options, their defaults, and the usage line that lists them. */
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { freePort } from "./dev-server";
import type { EnvOverlay } from "./wrangler";

export const USAGE = `usage: npm start [-- [--port <n>] [--inspector-port <n>] [--persist-to <dir>]]
  --port            the loopback port to serve on (default: $PORT, else 8787)
  --inspector-port  the loopback port for the devtools inspector (default: $INSPECTOR_PORT, else 9229
                    when it is free, else any free port), so two servers can run side by side
  --persist-to      the local state folder (default: .wrangler/state); the dev key is kept beside it`;

export const START_OPTIONS = {
  port: { type: "string" },
  "inspector-port": { type: "string" },
  "persist-to": { type: "string" },
  help: { type: "boolean", default: false },
} as const;

/** wrangler's own default, kept when nothing else holds it. */
export const DEFAULT_INSPECTOR_PORT = 9229;

export function parsePort(text: string, option = "--port", envName = "PORT"): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw new Error(`port '${text}' is not a TCP port: give a whole number from 1 to 65535 (${option} 8788 or ${envName}=8788)`);
  return port;
}

const isFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });

export interface StartOptions {
  help: boolean;
  port: number;
  inspectorPort: number;
  persistTo?: string;
}

export async function parseStartArgs(argv: string[], env: EnvOverlay): Promise<StartOptions> {
  const { values } = parseArgs({ args: argv, options: START_OPTIONS });
  const port = parsePort(values.port ?? env.PORT ?? "8787");
  const asked = values["inspector-port"] ?? env.INSPECTOR_PORT;
  // An explicit port is used as given (wrangler says so if it is taken); the default must not collide
  // with another `npm start` that already holds 9229.
  const inspectorPort = asked !== undefined ? parsePort(asked, "--inspector-port", "INSPECTOR_PORT") : (await isFree(DEFAULT_INSPECTOR_PORT)) ? DEFAULT_INSPECTOR_PORT : await freePort();
  if (inspectorPort === port) throw new Error(`--inspector-port ${inspectorPort} is the port the server listens on: give another one`);
  return { help: values.help, port, inspectorPort, persistTo: values["persist-to"] };
}

/** The `wrangler dev` arguments for these options. */
export function wranglerDevArgs(opts: StartOptions, envFiles: string[]): string[] {
  // --test-scheduled: local dev has no cron clock, so /__scheduled?cron=… is the way to run the jobs (docs/operations.md: Cron).
  return [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(opts.port),
    "--inspector-port",
    String(opts.inspectorPort),
    "--test-scheduled",
    "--show-interactive-dev-session=false",
    ...(opts.persistTo ? ["--persist-to", opts.persistTo] : []),
    ...envFiles,
  ];
}
