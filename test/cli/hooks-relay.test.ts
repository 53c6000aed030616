/**
 * `agent-ledger hook <client>`: the relay a client's command hook runs, against a real HTTP server
 * on 127.0.0.1. The server's answer is printed as is; any trouble prints `{}` and exits 0 with a
 * one-line warning, so the agent is never stopped by the ledger's own trouble.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { relayHook, type RelayOptions, type RelayResult } from "../../src/cli/hooks";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

interface Seen {
  method?: string;
  url?: string;
  auth?: string;
  body?: string;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; seen: Seen }> {
  const seen: Seen = {};
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      Object.assign(seen, { method: req.method, url: req.url, auth: req.headers.authorization, body });
      handler(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const EVENT = JSON.stringify({ session_id: "thr_1", cwd: "/home/dev/api", hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: "*** Begin Patch" } });

describe("relayHook", () => {
  it("posts the event as is with the bearer key and the repository, and prints the server's answer", async () => {
    const answer = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "held" } };
    const { url, seen } = await serve((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(answer)));
    const options: RelayOptions = { url: `${url}/`, key: "alk_test", fetch, timeoutMs: 2000, repository: "acme/api" };
    const r: RelayResult = await relayHook("codex", EVENT, options);
    expect(r).toEqual({ stdout: JSON.stringify(answer), exitCode: 0, stderr: "" });
    expect(seen).toEqual({ method: "POST", url: "/mcp/hooks/codex?repository=acme/api", auth: "Bearer alk_test", body: EVENT });
  });

  it("goes on with {} and a warning on a 500, a 401, an answer that is not a JSON object", async () => {
    for (const [status, body, warning] of [
      [500, "boom", /the server answered 500; the agent goes on\.$/],
      [401, '{"ok":false}', /answered 401 \(the key is missing, wrong or revoked\)/],
      [200, "<html>", /answer was not JSON/],
      [200, "[1,2]", /answer was not a JSON object/],
    ] as const) {
      const { url } = await serve((_req, res) => res.writeHead(status).end(body));
      const r = await relayHook("cursor", "{}", { url, key: "k", fetch, timeoutMs: 2000 });
      expect(r.stdout, String(status)).toBe("{}");
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toMatch(warning);
      expect(r.stderr.includes("\n")).toBe(false);
    }
  });

  it("gives up after the time-out and goes on", async () => {
    const { url } = await serve(() => {
      /* never answers */
    });
    const started = Date.now();
    const r = await relayHook("gemini", EVENT, { url, key: "k", fetch, timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r).toMatchObject({ stdout: "{}", exitCode: 0 });
    expect(r.stderr).toMatch(/no answer within 300 ms/);
  });

  it("goes on when the server is unreachable or nothing is configured, without sending anything", async () => {
    const { url } = await serve((_req, res) => res.end("{}"));
    const port = new URL(url).port;
    await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
    const down = await relayHook("claude-code", EVENT, { url: `http://127.0.0.1:${port}`, key: "k", fetch, timeoutMs: 2000 });
    expect(down).toMatchObject({ stdout: "{}", exitCode: 0 });
    expect(down.stderr).toMatch(/could not reach http:\/\/127\.0\.0\.1:\d+/);
    let called = false;
    const spy = (async () => {
      called = true;
      return new Response("{}");
    }) as typeof fetch;
    expect((await relayHook("codex", EVENT, { url: "", key: "k", fetch: spy, timeoutMs: 2000 })).stderr).toMatch(/no server address or API key configured/);
    expect((await relayHook("codex", EVENT, { url: "http://x", key: "", fetch: spy, timeoutMs: 2000 })).stdout).toBe("{}");
    expect((await relayHook("codex", "x".repeat(1024 * 1024 + 1), { url: "http://x", key: "k", fetch: spy, timeoutMs: 2000 })).stderr).toMatch(/larger than 1 MiB/);
    expect(called).toBe(false);
  });
});
