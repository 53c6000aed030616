/** Sessions with runs for tests that call tools through the registry rather than over HTTP. */
import { env } from "cloudflare:workers";
import { sessionStub } from "../../src/durable/session";
import type { Ctx } from "../../src/core/context";
import { bindSessionRun } from "../../src/work/runs/model";

/**
 * `ctx` inside a fresh MCP session: writes mint and then reuse the session's run. Each call
 * binds the run from the session record afresh, as every HTTP request does.
 */
export async function inSession(ctx: Ctx, opts: { sessionId?: string; clientName?: string; runSeriesKey?: string } = {}): Promise<Ctx> {
  const sessionId = opts.sessionId ?? crypto.randomUUID();
  const stub = sessionStub(env, sessionId);
  await stub.open({ tenantId: ctx.tenantId, actorId: ctx.actorId, createdAt: new Date().toISOString(), protocolVersion: "", clientName: opts.clientName ?? "vitest", clientVersion: "" });
  const session: Ctx = { ...ctx, sessionId };
  const bound = async () => bindSessionRun(session, (await stub.touch())!, opts.runSeriesKey ?? null);
  return { ...session, ensureRun: async () => (await bound()).ensureRun!(), currentRun: async () => (await bound()).currentRun!() };
}

/** A running session run in ctx's tenant, for tests that need a run to name. */
export async function mintRun(ctx: Ctx): Promise<{ id: string; run_key: string }> {
  const id = await (await inSession(ctx)).ensureRun!();
  return (await env.DB.prepare("SELECT id, run_key FROM runs WHERE id = ?").bind(id).first<{ id: string; run_key: string }>())!;
}
