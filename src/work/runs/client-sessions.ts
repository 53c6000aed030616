/**
 * One run per agent session, across its two channels: the agent's MCP tool calls and its client's
 * hook events (docs/hooks.md: One run per session). Clients send their own session id on MCP
 * requests in a header, and the same id as a hook event's `session_id`; the server remembers
 * which MCP session carried it, so a hook naming it acts in that session and lands on its run.
 */
import { and, eq } from "drizzle-orm";
import { dbOf } from "../../db/client";
import { clientSessions } from "../../db/schema";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { sessionStub } from "../../durable/session";
import { bindSessionRun, refreshSessionRun } from "./model";

/**
 * Where a client's own session id rides on an MCP request, in the order they are read: ours (a
 * client's MCP config can set it), Claude Code's, and Codex's.
 */
export const CLIENT_SESSION_HEADERS = ["X-Agent-Session-Id", "X-Claude-Code-Session-Id", "Session-Id"] as const;

export const MAX_CLIENT_SESSION_ID = 128;
/** Checked after the length, so the match is over at most 128 characters. */
const CLIENT_SESSION_ID = /^[A-Za-z0-9._:-]+$/;

export const isClientSessionId = (value: string): boolean => value.length > 0 && value.length <= MAX_CLIENT_SESSION_ID && CLIENT_SESSION_ID.test(value);

/** The first well-formed client session id among the request's headers, or null; a malformed value is ignored. */
export function clientSessionOf(header: (name: string) => string | undefined): string | null {
  for (const name of CLIENT_SESSION_HEADERS) {
    const value = header(name)?.trim();
    if (value && isClientSessionId(value)) return value;
  }
  return null;
}

/**
 * Records that ctx's MCP session carries `clientSessionId`: the row first, then the session record,
 * so a failed write is retried on the session's next request. Callers write only when the
 * session record holds another id (or none): once per session, not per request. Never throws:
 * the request it rides on must not fail for it.
 */
export async function rememberClientSession(ctx: Ctx, clientSessionId: string): Promise<void> {
  const seenAt = iso(ctx.clock.now());
  try {
    await dbOf(ctx)
      .insert(clientSessions)
      .values({ tenantId: ctx.tenantId, actorId: ctx.actorId, clientSessionId, mcpSessionId: ctx.sessionId, seenAt })
      .onConflictDoUpdate({ target: [clientSessions.tenantId, clientSessions.actorId, clientSessions.clientSessionId], set: { mcpSessionId: ctx.sessionId, seenAt } })
      .run();
    await sessionStub(ctx.env, ctx.sessionId).setClientSession(clientSessionId);
  } catch (err) {
    console.warn("could not record the client's session id", err instanceof Error ? err.message : String(err));
  }
}

export interface JoinedSession {
  /** ctx acting in the MCP session: its session id, and its run for writes (minted by the first, as for a tool call). */
  ctx: Ctx;
  /** Refreshes the session's run's heartbeat when it has one and the refresh is due (about once a minute). */
  heartbeat: () => Promise<void>;
}

/**
 * ctx joined to the live MCP session of the caller's that last carried `clientSessionId`, or null:
 * no such session (never seen, ended, another tenant's or actor's, or since taken over by
 * another client session id).
 */
export async function joinClientSession(ctx: Ctx, clientSessionId: string): Promise<JoinedSession | null> {
  if (!isClientSessionId(clientSessionId)) return null;
  const row = await dbOf(ctx)
    .select({ mcpSessionId: clientSessions.mcpSessionId })
    .from(clientSessions)
    .where(and(eq(clientSessions.tenantId, ctx.tenantId), eq(clientSessions.actorId, ctx.actorId), eq(clientSessions.clientSessionId, clientSessionId)))
    .get();
  if (!row) return null;
  const session = await sessionStub(ctx.env, row.mcpSessionId).touch();
  if (!session || session.tenantId !== ctx.tenantId || session.actorId !== ctx.actorId || session.clientSessionId !== clientSessionId) return null;
  const inSession: Ctx = { ...ctx, sessionId: row.mcpSessionId };
  return {
    ctx: { ...inSession, ...bindSessionRun(inSession, session, null) },
    heartbeat: async () => {
      if (session.run) await refreshSessionRun(inSession, session.run);
    },
  };
}
