/**
 * One actor's inbox bell. Open subscriptions to `ledger://inbox` (a 2026-07-28 `subscriptions/listen`
 * stream, a 2025 session's GET stream) each hold a line stream from this object; when notices land for
 * the actor, `ring()` writes a line to every open stream and the Worker side turns it into
 * `notifications/resources/updated`. Nothing is stored: a bell rung while nobody listens is lost, and
 * a client reads the inbox itself when it (re)subscribes, so it misses no notice.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

const RING = new TextEncoder().encode("ring\n");
const READY = new TextEncoder().encode("ready\n");
/** Streams one actor may hold open at once; the oldest is closed to make room. */
export const MAX_LISTENERS = 32;

export class InboxDO extends DurableObject<Env> {
  private readonly listeners = new Set<ReadableStreamDefaultController<Uint8Array>>();

  /** A line stream: `ready` at once, then `ring` each time notices land. */
  override async fetch(): Promise<Response> {
    let own: ReadableStreamDefaultController<Uint8Array> | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        own = controller;
        if (this.listeners.size >= MAX_LISTENERS) {
          const oldest = this.listeners.values().next().value!;
          this.listeners.delete(oldest);
          try {
            oldest.close();
          } catch {
            // Already closed by its reader.
          }
        }
        this.listeners.add(controller);
        controller.enqueue(READY);
      },
      cancel: () => {
        if (own) this.listeners.delete(own);
      },
    });
    return new Response(stream, { headers: { "Content-Type": "text/plain" } });
  }

  /** Wakes every open stream; returns how many were listening. */
  async ring(): Promise<number> {
    for (const controller of [...this.listeners]) {
      try {
        controller.enqueue(RING);
      } catch {
        this.listeners.delete(controller);
      }
    }
    return this.listeners.size;
  }
}

export const inboxStub = (env: Env, tenantId: string, actorId: string) => env.INBOX.get(env.INBOX.idFromName(`${tenantId}:${actorId}`));

/**
 * Listens to an actor's bell: `onRing` runs for each ring until the returned function is called.
 * The first `ready` line says the stream is open (a test waits for it before ringing).
 */
export function listenToInbox(env: Env, tenantId: string, actorId: string, onRing: () => void, onReady?: () => void): () => void {
  let reader: ReadableStreamDefaultReader<string> | undefined;
  let stopped = false;
  void (async () => {
    const response = await inboxStub(env, tenantId, actorId).fetch("https://inbox/listen");
    if (!response.body) return;
    reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    if (stopped) return void reader.cancel().catch(() => undefined);
    let pending = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      pending += value;
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line === "ring") onRing();
        else if (line === "ready") onReady?.();
      }
    }
  })().catch((err) => {
    if (!stopped) console.warn("inbox listen ended", err instanceof Error ? err.message : String(err));
  });
  return () => {
    stopped = true;
    void reader?.cancel().catch(() => undefined);
  };
}
