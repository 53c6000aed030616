/**
 * A loopback reverse proxy that adds `Authorization: Bearer <key>` to requests for the MCP path.
 *
 * The conformance suite's server command has no option for credentials (no header flag, no
 * environment variable): it expects an open server. The server refuses /mcp without a key, so
 * the suite talks to this proxy, which plays the part of a client configured with a bearer header
 * (as `claude mcp add --header` does) and changes nothing else: method, path, every other header
 * (Host and Origin included, which the DNS-rebinding scenario forges on purpose) and both bodies
 * pass through as they are, streamed, so SSE responses arrive event by event.
 */
import { createServer, request, type IncomingMessage } from "node:http";

export interface BearerProxy {
  /** The proxy's origin, e.g. http://127.0.0.1:41234. */
  url: string;
  close(): Promise<void>;
}

export function startBearerProxy(upstream: string, key: string, mcpPath = "/mcp"): Promise<BearerProxy> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const headers = forwardedHeaders(req, key, mcpPath);
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, upRes.rawHeaders);
      // A JSON response is flushed whole; an SSE one must reach the suite before the stream ends.
      res.flushHeaders();
      upRes.pipe(res);
    });
    up.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${err.message}`);
    });
    // The suite aborts streams it has read enough of; the upstream request must end with them.
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The request's own headers (raw, so repeated and oddly cased ones survive), plus the key where none was sent. */
function forwardedHeaders(req: IncomingMessage, key: string, mcpPath: string): string[] {
  const raw = [...req.rawHeaders];
  const path = new URL(req.url ?? "/", "http://proxy").pathname;
  const hasAuth = req.headers.authorization !== undefined;
  if (path === mcpPath && !hasAuth) raw.push("Authorization", `Bearer ${key}`);
  return raw;
}
