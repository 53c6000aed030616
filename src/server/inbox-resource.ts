/**
 * `ledger://inbox`: the caller's unread notifications as a resource, and subscriptions to it, so an
 * agent hears of a failed check or an overseer's message without polling. A 2026-07-28 client
 * subscribes with `subscriptions/listen` (its stream is the SDK's listen router over the bus below);
 * a 2025 session with `resources/subscribe`, and hears on its GET stream (src/http/mcp.ts). Either way
 * the signal is the actor's bell (src/durable/inbox.ts), rung whenever notices land for them.
 */
import type { McpServer, ServerEvent, ServerEventBus } from "@modelcontextprotocol/server";
import type { Ctx } from "../core/context";
import { callTool } from "../core/call";
import type { Env } from "../env";
import { inboxStub, listenToInbox } from "../durable/inbox";
import { sessionStub } from "../durable/session";
import { notificationQueryTool, type DeliveryCtx } from "../work";

export const INBOX_URI = "ledger://inbox";
const JSON_TYPE = "application/json";

/** The resource: what notification_query answers for unread notices (overseer messages first). */
export function registerInboxResource(mcp: McpServer, ctx: Ctx): void {
  mcp.registerResource(
    "inbox",
    INBOX_URI,
    {
      title: "Your inbox",
      description: "Your unread notifications, unread overseer messages first (as notification_query with unread_only). Subscribe to hear when new ones land.",
      mimeType: JSON_TYPE,
    },
    async (uri) => {
      const result = await callTool(notificationQueryTool, ctx, { unread_only: true, limit: 50 });
      return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(result.structuredContent) }] };
    },
  );
}

/**
 * The event bus a 2026-07-28 handler's listen router reads: one actor's bell. Publishing is not
 * needed here (the bell is rung by deliverNotices' listener), so publish does nothing.
 */
export function inboxBus(env: Env, tenantId: string, actorId: string): ServerEventBus {
  return {
    publish: () => undefined,
    // The router sends each update only to the streams subscribed to its uri (the inbox, a task).
    subscribe: (listener: (event: ServerEvent) => void) => listenToInbox(env, tenantId, actorId, (uri) => listener({ kind: "resource_updated", uri: uri ?? INBOX_URI })),
  };
}

/** Rings the bells of the actors whose notices just landed; registered with onNoticesDelivered. */
export async function ringInboxes(ctx: DeliveryCtx, recipients: string[]): Promise<void> {
  const env = ctx.env;
  if (!env) return;
  const rung = Promise.all(recipients.map((actorId) => inboxStub(env, ctx.tenantId, actorId).ring())).then(
    () => undefined,
    (err) => console.warn("ringing inboxes failed", err instanceof Error ? err.message : String(err)),
  );
  if (ctx.waitUntil) ctx.waitUntil(rung);
  else await rung;
}

/** Keep-alive comments on a session's GET stream, so proxies do not close an idle one. */
const KEEP_ALIVE_MS = 25_000;

/**
 * A 2025 session's GET stream: each ring of the actor's bell becomes notifications/resources/updated
 * for ledger://inbox while the session subscribes to it (asked at each ring, so a subscription made
 * or ended after the stream opened counts).
 */
export function inboxSessionStream(env: Env, sessionId: string, tenantId: string, actorId: string, signal: AbortSignal): Response {
  const encoder = new TextEncoder();
  let stop = () => undefined as void;
  let timer: ReturnType<typeof setInterval> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      const write = (frame: string) => {
        try {
          controller.enqueue(encoder.encode(frame));
        } catch {
          close();
        }
      };
      const close = () => {
        stop();
        if (timer !== undefined) clearInterval(timer);
        try {
          controller.close();
        } catch {
          // Already closed.
        }
      };
      // An SSE comment first, so the client sees the stream open before any news.
      write(": inbox\n\n");
      stop = listenToInbox(env, tenantId, actorId, (uri) => {
        // Tasks are a 2026-07-28 extension: a session's stream carries the inbox only.
        if (uri !== undefined) return;
        void sessionStub(env, sessionId)
          .subscribes(INBOX_URI)
          .then((on) => {
            if (on) write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: INBOX_URI } })}\n\n`);
          });
      });
      timer = setInterval(() => write(": keepalive\n\n"), KEEP_ALIVE_MS);
      signal.addEventListener("abort", close, { once: true });
    },
    cancel: () => {
      stop();
      if (timer !== undefined) clearInterval(timer);
    },
  });
  return new Response(stream, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no" } });
}
