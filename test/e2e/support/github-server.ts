/**
 * Serves a fetch-style handler (the fake GitHub) on a loopback port, so `wrangler dev` can be
 * pointed at it with GITHUB_API_URL: the e2e tests drive the git tools over real HTTP end to end.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";

export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  return new Request(`${origin}${req.url ?? "/"}`, { method: req.method, headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : body });
}

export function serveFetch(handler: (req: Request) => Promise<Response>, port = 0): Promise<LoopbackServer> {
  return new Promise((resolve, reject) => {
    let origin = "";
    const server: Server = createServer((req, res) => {
      void (async () => {
        try {
          const response = await handler(await toRequest(req, origin));
          res.writeHead(response.status, Object.fromEntries(response.headers));
          res.end(Buffer.from(await response.arrayBuffer()));
        } catch (err) {
          // A request the fake refuses is a test failure; answer so the worker reports it.
          res.writeHead(599, { "content-type": "application/json" });
          res.end(JSON.stringify({ message: `fake GitHub refused the request: ${err instanceof Error ? err.message : String(err)}` }));
        }
      })();
    });
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const { port: bound } = server.address() as { port: number };
      origin = `http://127.0.0.1:${bound}`;
      resolve({ url: origin, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}
