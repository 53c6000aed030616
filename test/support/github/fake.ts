/**
 * A GitHub stand-in for tests: a fetch function that accepts only requests GitHub's published
 * OpenAPI description allows (the committed subset, see scripts/openapi-subset.ts) and answers
 * from handlers the test registers. Every request is checked: host, method and path template, the
 * path and required query parameters, no unknown query parameters, required body fields and no
 * unknown ones. Every JSON answer the test gives is validated against the operation's response
 * schema. Anything else fails the test: there is no fallback to the network.
 */
import { Validator } from "@cfworker/json-schema";
import subset from "./openapi-subset.json";

export const FAKE_API = "https://api.github.test";

interface OperationSpec {
  operationId: string;
  parameters: { name: string; in: string; required: boolean }[];
  body: { required: string[]; properties: string[] } | null;
  responses: Record<string, unknown>;
  examples: Record<string, unknown>;
}

const OPERATIONS = subset.operations as unknown as Record<string, OperationSpec>;

interface Route {
  op: string;
  method: string;
  pattern: RegExp;
  names: string[];
  spec: OperationSpec;
}

/** Path parameters that may hold slashes, as GitHub's routes allow (a file path, a ref, base...head). */
const SLASHED = new Set(["path", "ref", "basehead"]);

const ROUTES: Route[] = Object.entries(OPERATIONS)
  .map(([op, spec]) => {
    const [method, template] = op.split(" ") as [string, string];
    const names: string[] = [];
    const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_m, name: string) => {
      names.push(name);
      return SLASHED.has(name) ? "(.+)" : "([^/]+)";
    });
    return { op, method, pattern: new RegExp(`^${source}$`), names, spec };
  })
  .sort((a, b) => b.pattern.source.length - a.pattern.source.length);

export interface FakeRequest {
  op: string;
  method: string;
  path: Record<string, string>;
  query: Record<string, string>;
  body: Record<string, unknown> | null;
  headers: Headers;
}

export interface FakeReply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

const validators = new Map<string, Validator>();

function checkResponse(op: string, status: number, body: unknown): void {
  const schema = OPERATIONS[op]!.responses[String(status)];
  if (!schema || status >= 300) return;
  const key = `${op} ${status}`;
  let v = validators.get(key);
  if (!v) {
    v = new Validator(schema as never, "2020-12", false);
    validators.set(key, v);
  }
  const result = v.validate(body);
  if (!result.valid) {
    const first = result.errors
      .slice(-3)
      .map((e) => `${e.instanceLocation}: ${e.error}`)
      .join("; ");
    throw new Error(`fixture for ${op} ${status} does not match GitHub's response schema: ${first}`);
  }
}

/** A request to a download URL beside the API (an archive's codeload URL), as it arrived. */
export interface DownloadRequest {
  url: string;
  headers: Headers;
}

export type DownloadHandler = (req: Request) => Response | Promise<Response>;

export class FakeGitHub {
  readonly requests: FakeRequest[] = [];
  readonly downloads: DownloadRequest[] = [];
  private readonly handlers = new Map<string, Handler>();
  private readonly downloadHandlers: Array<[prefix: string, handler: DownloadHandler]> = [];

  constructor(readonly apiBase = FAKE_API) {}

  /** Answers `op` (e.g. "GET /repos/{owner}/{repo}") with `handler`; replaces an earlier one. */
  on(op: string, handler: Handler): this {
    if (!OPERATIONS[op]) throw new Error(`${op} is not in the OpenAPI subset; add it to scripts/openapi-subset.ts`);
    this.handlers.set(op, handler);
    return this;
  }

  /**
   * Serves URLs under `prefix` (an absolute URL) with `handler`: the targets GitHub redirects a
   * download to, which are not API operations and so have no OpenAPI description to check.
   */
  serveDownloads(prefix: string, handler: DownloadHandler): this {
    this.downloadHandlers.push([prefix, handler]);
    return this;
  }

  count(op: string): number {
    return this.requests.filter((r) => r.op === op).length;
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const req = input instanceof Request ? input : new Request(String(input), init);
    const download = this.downloadHandlers.find(([prefix]) => req.url.startsWith(prefix));
    if (download) {
      this.downloads.push({ url: req.url, headers: req.headers });
      return download[1](req);
    }
    const url = new URL(req.url);
    const base = new URL(this.apiBase);
    if (url.origin !== base.origin) throw new Error(`request outside the GitHub API under test: ${req.url}`);
    const path = url.pathname.slice(base.pathname.replace(/\/$/, "").length);
    const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(path));
    if (!route) throw new Error(`GitHub has no operation ${req.method} ${path} (per its OpenAPI description)`);
    const m = route.pattern.exec(path)!;
    const params: Record<string, string> = {};
    route.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
    const query = Object.fromEntries(url.searchParams);
    const allowedQuery = new Set(route.spec.parameters.filter((p) => p.in === "query").map((p) => p.name));
    for (const p of route.spec.parameters) {
      if (p.in === "path" && !params[p.name]) throw new Error(`${route.op}: missing path parameter ${p.name}`);
      if (p.in === "query" && p.required && !(p.name in query)) throw new Error(`${route.op}: missing required query parameter ${p.name}`);
    }
    for (const k of Object.keys(query)) if (!allowedQuery.has(k)) throw new Error(`${route.op}: unknown query parameter ${k}`);
    const text = await req.text();
    let body: Record<string, unknown> | null = null;
    if (text) {
      body = JSON.parse(text) as Record<string, unknown>;
      if (!route.spec.body) throw new Error(`${route.op} takes no body`);
      for (const k of route.spec.body.required) if (!(k in body)) throw new Error(`${route.op}: body lacks required ${k}`);
      for (const k of Object.keys(body)) if (!route.spec.body.properties.includes(k)) throw new Error(`${route.op}: body has unknown field ${k}`);
    } else if (route.spec.body?.required.length) {
      throw new Error(`${route.op}: body required (${route.spec.body.required.join(", ")})`);
    }
    if (!req.headers.get("authorization")?.startsWith("Bearer ")) throw new Error(`${route.op}: no bearer token`);
    const request: FakeRequest = { op: route.op, method: req.method, path: params, query, body, headers: req.headers };
    this.requests.push(request);
    const handler = this.handlers.get(route.op);
    if (!handler) throw new Error(`unexpected GitHub request in this test: ${route.op} ${path}`);
    const reply = await handler(request);
    const status = reply.status ?? 200;
    if (reply.body !== undefined) checkResponse(route.op, status, reply.body);
    const headers = { "content-type": "application/json; charset=utf-8", ...reply.headers };
    // A redirect (a download's 302 to its Location) has no body, as GitHub sends it.
    const bodyless = status === 204 || status === 304 || (status >= 300 && status < 400 && reply.body === undefined);
    return new Response(bodyless ? null : JSON.stringify(reply.body ?? {}), { status, headers });
  };
}

type DeepPartial<T> = T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

function merge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (Array.isArray(over) || over === null || typeof over !== "object" || base === null || typeof base !== "object" || Array.isArray(base)) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over as Record<string, unknown>)) out[k] = merge(out[k], v);
  return out;
}

/**
 * GitHub's own example answer for an operation (from its OpenAPI description), with `overrides`
 * merged in deeply (arrays replace): fixtures are real shapes, changed only where a test needs.
 */
export function example<T = Record<string, unknown>>(op: string, overrides?: DeepPartial<T> | Record<string, unknown>, status = "200"): T {
  const spec = OPERATIONS[op];
  const value = spec?.examples[status];
  if (value === undefined) throw new Error(`no example for ${op} ${status}`);
  return merge(structuredClone(value), overrides) as T;
}

/** An element of an operation's example list answer (e.g. one commit of GET …/commits), with overrides. */
export function exampleItem<T = Record<string, unknown>>(op: string, overrides?: Record<string, unknown>, status = "200"): T {
  const list = example<unknown[]>(op, undefined, status);
  if (!Array.isArray(list) || list.length === 0) throw new Error(`${op} ${status} example is not a list`);
  return merge(structuredClone(list[0]), overrides) as T;
}

/** A GitHub-shaped error body, as GitHub sends them. */
export const errorBody = (message: string) => ({ message, documentation_url: "https://docs.github.com/rest" });
