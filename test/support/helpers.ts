/** Shared test plumbing: identities made the way the keys command makes them, contexts, clients. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { provisionKey } from "../../src/auth/provision";
import type { Clock } from "../../src/core/time";
import type { Ctx } from "../../src/core/context";
import { ToolError } from "../../src/core/errors";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { coalescingReads } from "../../src/db/coalesce";

export interface TestIdentity {
  key: string;
  tenantId: string;
  actorId: string;
  actorName: string;
  operator: boolean;
}

/**
 * Creates (or reuses) a tenant and actor and a fresh key, through the keys command's own SQL;
 * `operator: true` makes it an operator key (`npm run keys -- create … --operator`).
 */
export async function seedIdentity(tenant: string, actor: string, opts: { operator?: boolean } = {}): Promise<TestIdentity> {
  const operator = opts.operator ?? false;
  const { key, statements } = await provisionKey(tenant, actor, new Date(), "", operator ? "operator" : "agent");
  for (const sql of statements) await env.DB.prepare(sql).run();
  const row = await env.DB.prepare(`SELECT a.tenant_id AS tenantId, a.id AS actorId, a.name AS actorName FROM actors a JOIN tenants t ON t.id = a.tenant_id WHERE t.slug = ? AND a.name = ?`)
    .bind(tenant, actor)
    .first<{ tenantId: string; actorId: string; actorName: string }>();
  return { key, ...row!, operator };
}

/** A clock tests move by hand. */
export class TestClock implements Clock {
  constructor(private at: Date = new Date("2026-06-01T12:00:00.000Z")) {}
  now(): Date {
    return new Date(this.at);
  }
  set(iso: string): void {
    this.at = new Date(iso);
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/** Work each test ctx handed to waitUntil, so a test can wait for what runs after the response. */
const afterResponse = new WeakMap<object, Promise<unknown>[]>();

/** Waits for everything the ctx's tool calls scheduled after their response (e.g. embeddings). */
export async function settle(ctx: Ctx): Promise<void> {
  const key = afterResponse.has(ctx) ? ctx : (ctx as Ctx & { waitUntilKey?: object }).waitUntilKey;
  const list = key ? afterResponse.get(key) : undefined;
  while (list && list.length > 0) await Promise.allSettled(list.splice(0));
}

export function makeCtx(id: TestIdentity, clock: Clock = new TestClock(), sessionId = ""): Ctx {
  const pending: Promise<unknown>[] = [];
  const ctx: Ctx & { waitUntilKey?: object } = {
    env,
    // As a request's context has it (src/http/mcp.ts): reads made side by side share a batch.
    d1: coalescingReads(env.DB),
    tenantId: id.tenantId,
    actorId: id.actorId,
    actorName: id.actorName,
    operator: id.operator,
    sessionId,
    clock,
    waitUntil: (p) => void pending.push(p),
  };
  // Copies made with {...ctx} (e.g. to override env) keep pointing at the same list.
  ctx.waitUntilKey = ctx;
  afterResponse.set(ctx, pending);
  return ctx;
}

export type Structured = Record<string, any>;

/** Calls a tool through the registry (the same path tools/call takes) and returns its envelope. */
export async function call(ctx: Ctx, name: string, args: unknown): Promise<Structured & { isError: boolean }> {
  const def = findTool(name);
  if (!def) throw new Error(`no tool ${name}`);
  const result = await callTool(def, ctx, args);
  return { ...(result.structuredContent as Structured), isError: result.isError === true };
}

/** Like `call`, but fails the test unless the call succeeded. */
export async function ok(ctx: Ctx, name: string, args: unknown): Promise<Structured> {
  const r = await call(ctx, name, args);
  if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
  return r;
}

/** Asserts a failed call and returns its error body. */
export async function fails(ctx: Ctx, name: string, args: unknown): Promise<{ code: string; message: string; hint: string; retryable: boolean }> {
  const r = await call(ctx, name, args);
  if (r.ok || !r.isError) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(r)}`);
  return r.error;
}

export const workerFetch = (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init));

/**
 * An MCP SDK client talking to the worker under test over Streamable HTTP; `capabilities` are
 * declared at initialize, and `prepare` runs before it (to set handlers for server requests).
 */
export async function connectClient(
  key: string,
  path = "/mcp",
  capabilities: ClientCapabilities = {},
  prepare: (client: Client) => void = () => {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://ledger.test${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (input, init) => workerFetch(input, init),
  });
  // The client shares the worker's isolate here, so it too must validate without code generation.
  const client = new Client({ name: "vitest", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator(), capabilities });
  prepare(client);
  await client.connect(transport);
  return { client, transport };
}

export async function count(sql: string, ...params: unknown[]): Promise<number> {
  const row = await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * Asserts a refused call: `code`, a complete error body, and `state` (whatever the caller can
 * read back of what the tools write) unchanged by the call.
 */
export async function refusedWithoutWrites(ctx: Ctx, tool: string, args: unknown, code: string, state: () => Promise<unknown>): Promise<Structured> {
  const before = await state();
  const r = await call(ctx, tool, args);
  expect(r.isError, JSON.stringify(r)).toBe(true);
  expect(r.ok).toBe(false);
  expect(r.error.code).toBe(code);
  expect(r.error.message.length).toBeGreaterThan(0);
  expect(r.error.hint.length).toBeGreaterThan(0);
  expect(typeof r.error.retryable).toBe("boolean");
  expect(await state()).toEqual(before);
  return r.error as Structured;
}

export interface Who {
  id: TestIdentity;
  ctx: Ctx;
}

export interface World extends Who {
  slug: string;
  clock: TestClock;
  /** Another actor of the same tenant, sharing the clock, in its own session; `operator` gives it an operator key. */
  other(name: string, opts?: { operator?: boolean }): Promise<Who>;
}

/** A fresh tenant (tests share one database per file) with one caller and a clock at `start`. */
export async function newWorld(prefix: string, opts: { start: string; actor?: string; sessionId?: string }): Promise<World> {
  const slug = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const actor = opts.actor ?? "agent";
  const id = await seedIdentity(slug, actor);
  const clock = new TestClock(new Date(opts.start));
  return {
    slug,
    id,
    clock,
    ctx: makeCtx(id, clock, opts.sessionId ?? "sess-1"),
    other: async (n, o) => {
      const oid = await seedIdentity(slug, n, o);
      return { id: oid, ctx: makeCtx(oid, clock, `sess-${n}`) };
    },
  };
}

/**
 * Asserts that `p` (a promise, or a function that may throw) fails with a ToolError that carries a
 * message and a hint (every error tells the caller how to recover), and returns it.
 */
export async function refusal(p: Promise<unknown> | (() => unknown)): Promise<ToolError> {
  const err = await (typeof p === "function" ? Promise.resolve().then(p) : p).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  const t = err as ToolError;
  expect(t.message.length).toBeGreaterThan(0);
  expect(t.hint.length).toBeGreaterThan(0);
  return t;
}

/** The SQL of a D1 statement as workerd keeps it (`statement`). */
export const sqlOf = (statement: D1PreparedStatement): string => (statement as unknown as { statement: string }).statement;

/**
 * The batch in which a keyed write reserves its idempotency key (src/core/idempotency.ts), before
 * the tool runs: no part of the tool's own write.
 */
const reservesKey = (statements: D1PreparedStatement[]): boolean => statements.every((s) => /\bidempotency_keys\b/.test(sqlOf(s)));

/**
 * `ctx` whose first D1 batch that is the tool's own write (`isWrite`; by default any batch but the
 * key reservation) first lets `meanwhile` run, as if another request landed between the tool's
 * checks and its write.
 */
export function interleaved(ctx: Ctx, meanwhile: () => Promise<unknown>, isWrite: (statements: D1PreparedStatement[]) => boolean = (st) => !reservesKey(st)): Ctx {
  let armed = true;
  const d1 = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (armed && isWrite(statements)) {
            armed = false;
            await meanwhile();
          }
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...ctx, d1 };
}

/** Row counts of every ordinary table: what a refused call must leave unchanged. */
export async function tableRowCounts(): Promise<Record<string, number>> {
  const tables = await env.DB.prepare(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' AND sql NOT LIKE '%VIRTUAL TABLE%' AND name NOT LIKE '%fts%'`,
  ).all<{ name: string }>();
  const out: Record<string, number> = {};
  for (const { name } of tables.results) {
    out[name] = (await env.DB.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).first<{ n: number }>())!.n;
  }
  return out;
}
