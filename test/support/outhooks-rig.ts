/**
 * The outgoing webhooks' test rig: the OUTBOUND_HOOKS queue held (what the app sends is kept, not
 * delivered), the queue consumer driven by hand with a test clock, and a receiver standing in for
 * the subscribers' servers (DNS-over-HTTPS answers included). Any other outbound request fails.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import type { Ctx } from "../../src/core/context";
import type { Clock } from "../../src/core/time";
import type { Env } from "../../src/env";
import { deliverNotices } from "../../src/work/collab/inbox";
import { handleOutboundBatch, type HookMessage, OUTBOUND_HOOKS_QUEUE } from "../../src/work/outhooks/send";
import { type DnsRecords, dohAnswer, isDoh } from "./doh";
import { settle } from "./helpers";

export const RECEIVER = "https://hooks.example.com";

/** What the app put on the queue, in order. */
export const held: HookMessage[] = [];

export function holdQueue(): void {
  held.length = 0;
  vi.spyOn(env.OUTBOUND_HOOKS, "sendBatch").mockImplementation(async (messages) => {
    // The generated binding types the body unknown (wrangler.toml does not say); the app sends HookMessage.
    for (const m of messages) held.push(m.body as HookMessage);
    return { metadata: { metrics: { backlogCount: held.length, backlogBytes: 0 } } };
  });
}

/** Takes what is held so far, leaving the hold empty. */
export const take = (): HookMessage[] => held.splice(0);

export interface Received {
  url: string;
  headers: Headers;
  body: string;
  redirect: RequestInit["redirect"];
}

export interface Receiver {
  received: Received[];
  /** What the receiver answers to each POST, in order; the last one repeats. */
  answers: number[];
  /** Hosts looked up over DNS-over-HTTPS. */
  lookups: string[];
}

/**
 * Serves POSTs to the receiver's host (and to `extraOrigins`), answering from `answers`, and DoH
 * queries from `dns` (other names resolve to a public address).
 */
export function receiver(dns: Record<string, DnsRecords> = {}, extraOrigins: string[] = []): Receiver {
  const r: Receiver = { received: [], answers: [200], lookups: [] };
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (isDoh(url)) {
      r.lookups.push(new URL(url).searchParams.get("name")!);
      return dohAnswer(url, dns)!;
    }
    if (![RECEIVER, ...extraOrigins].includes(new URL(url).origin)) throw new Error(`Unexpected outbound request in a test: ${url}`);
    expect(init?.method).toBe("POST");
    r.received.push({ url, headers: new Headers(init?.headers), body: String(init?.body), redirect: init?.redirect });
    const status = r.answers.length > 1 ? r.answers.shift()! : r.answers[0]!;
    return new Response(status === 204 ? null : "receiver says", { status });
  });
  return r;
}

/**
 * Delivers messages to the consumer as the queue would, with `clock` as now; returns what it acked
 * and what it retried with which delay (the test pool's queue result records no delays, so the
 * messages' retry is watched here).
 */
export async function deliver(messages: readonly HookMessage[], clock: Clock, over: Partial<Env> = {}) {
  const batch = createMessageBatch(
    OUTBOUND_HOOKS_QUEUE,
    messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const delays = new Map<string, number | undefined>();
  for (const m of batch.messages) {
    const retry = m.retry.bind(m);
    vi.spyOn(m, "retry").mockImplementation((options) => {
      delays.set(m.id, options?.delaySeconds);
      retry(options);
    });
  }
  const ectx = createExecutionContext();
  await handleOutboundBatch(batch, { ...(env as unknown as Env), ...over }, clock);
  const result = await getQueueResult(batch, ectx);
  return { acked: result.explicitAcks, retried: result.retryMessages.map((r) => ({ msgId: r.msgId, delaySeconds: delays.get(r.msgId) })) };
}

/** A notice for `actorId` through the one way notices are written, and what its listeners started. */
export async function notify(ctx: Ctx, actorId: string, kind: string, summary = `${kind} news`): Promise<void> {
  await deliverNotices(ctx, [{ actorId, kind, objectType: "task", objectId: "t-1", summary, fromActorId: ctx.actorId }]);
  await settle(ctx);
}

/** HMAC-SHA256 of `body` with `secret` as hex, computed here rather than by the server's code. */
export async function hmacHex(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
}
