/**
 * One actor's inbox bell. Open subscriptions to `ledger://inbox` (a 2026-07-28 `subscriptions/listen`
 * stream, a 2025 session's GET stream) each hold a line stream from this object; when notices land for
 * the actor, `ring()` writes a line to every open stream and the Worker side turns it into
 * `notifications/resources/updated`. Nothing is stored: a bell rung while nobody listens is lost, and
 * a client reads the inbox itself when it (re)subscribes, so it misses no notice.
 */
import { DurableObject } from "cloudflare:workers";
import { and, eq, inArray, sql } from "drizzle-orm";
import { taskResourceUri } from "../core/task-driver";
import { dbOf } from "../db/client";
import { mcpTasks } from "../db/schema";
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

  /** Wakes every open stream, for the inbox or (`uri`) another of the actor's resources; returns how many were listening. */
  async ring(uri?: string): Promise<number> {
    // A line per ring: a uri is the server's own (no newline), checked so no caller can split a line.
    const line = uri === undefined ? RING : /^[\x21-\x7e]{1,300}$/.test(uri) ? new TextEncoder().encode(`ring ${uri}\n`) : undefined;
    if (!line) return this.listeners.size;
    for (const controller of [...this.listeners]) {
      try {
        controller.enqueue(line);
      } catch {
        this.listeners.delete(controller);
      }
    }
    return this.listeners.size;
  }
}

export const inboxStub = (env: Env, tenantId: string, actorId: string) => env.INBOX.get(env.INBOX.idFromName(`${tenantId}:${actorId}`));

/**
 * Listens to an actor's bell: `onRing` runs for each ring (with the resource's uri when it is not
 * the inbox) until the returned function is called.
 * The first `ready` line says the stream is open (a test waits for it before ringing).
 */
export function listenToInbox(env: Env, tenantId: string, actorId: string, onRing: (uri?: string) => void, onReady?: () => void): () => void {
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
        else if (line.startsWith("ring ")) onRing(line.slice(5));
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

/**
 * Rings the owners of the live MCP tasks that follow a piece of work (tasks whose `driver` link has
 * `key` = `value`), each with its task's resource: a client subscribed to it hears the work move.
 * Never throws: a bell nobody hears changes nothing, and the task is read afresh on tasks/get.
 */
export async function ringTaskFollowers(env: Env, tenantId: string, driver: string, key: string, value: string): Promise<void> {
  try {
    const rows = await dbOf({ d1: env.DB })
      .select({ id: mcpTasks.id, actorId: mcpTasks.actorId })
      .from(mcpTasks)
      .where(and(eq(mcpTasks.tenantId, tenantId), eq(mcpTasks.driver, driver), inArray(mcpTasks.status, ["working", "input_required"]), sql`json_extract(${mcpTasks.link}, ${`$.${key}`}) = ${value}`))
      .limit(50)
      .all();
    await Promise.all(rows.map((r) => inboxStub(env, tenantId, r.actorId).ring(taskResourceUri(r.id))));
  } catch (err) {
    console.warn("ringing task followers failed", err instanceof Error ? err.message : String(err));
  }
}
