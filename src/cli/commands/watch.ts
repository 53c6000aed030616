/**
 * `watch`: follows the activity feed, printing each new item once, oldest first, until stopped
 * (or after `--count` items). It polls activity_query with a keyset: items at or before the
 * newest one printed are never printed again.
 */
import type { Ledger } from "../connection";
import { EXIT, printError, type Out } from "../output";

interface Activity {
  id: string;
  at: string;
  actor_name: string;
  verb: string;
  object_type: string;
  object_id: string;
  summary: string;
  severity: string;
}

export interface WatchOptions {
  intervalMs: number;
  since: string;
  /** Stop after this many items (0: until interrupted). */
  count: number;
  filter: Record<string, unknown>;
}

export const formatActivity = (a: Activity): string =>
  `${a.at} ${a.severity === "info" ? "" : `[${a.severity}] `}${a.actor_name || "?"} ${a.verb} ${a.object_type}:${a.object_id.slice(0, 12)}  ${a.summary}`;

export async function watch(ledger: Ledger, out: Out, options: WatchOptions, signal: AbortSignal): Promise<number> {
  const seen = new Set<string>();
  let since = options.since;
  let printed = 0;
  while (!signal.aborted) {
    const { envelope } = await ledger.call("activity_query", { ...options.filter, since, limit: 200 });
    if (!envelope.ok) {
      printError(out, envelope.error?.code ?? "tool_error", envelope.error?.message ?? "", envelope.error?.hint);
      return EXIT.toolError;
    }
    const items = ((envelope.items as Activity[]) ?? []).filter((a) => !seen.has(a.id)).reverse();
    for (const a of items) {
      seen.add(a.id);
      out.stdout(out.json ? JSON.stringify(a) : formatActivity(a));
      since = a.at;
      if (options.count && ++printed >= options.count) return EXIT.ok;
    }
    // Items sharing the last timestamp are asked for again next time; `seen` keeps them from repeating.
    if (seen.size > 10_000) for (const id of [...seen].slice(0, 5_000)) seen.delete(id);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.intervalMs);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
  return EXIT.ok;
}
