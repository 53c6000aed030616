/**
 * Importing history into the change ledger: events that happened elsewhere (a repository's
 * commits, a migrations folder), each with its original time and the importer's stable id for it
 * (import_key). They go through log_change's validation and write path, chained like any event;
 * a key the tenant already holds is skipped, so a re-run imports nothing twice.
 */
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { dbOf, jsonValues } from "../../db/client";
import { events, type NewEvent } from "../../db/schema";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { iso, parseIsoInstant } from "../../core/time";
import { appendEvents, defaultProject, prepareChange, type LogChangeInput } from "../log-change";

/** Events one change_import call takes (each one costs a rate-limit unit beyond the batch allowance). */
export const IMPORT_MAX = 100;
export const IMPORT_KEY_MAX = 200;
/** How far ahead of the server's clock an imported time may be: clocks of other machines drift. */
export const FUTURE_SKEW_MS = 5 * 60_000;
/** Warnings an answer carries at most; the rest are counted. */
const WARNINGS_MAX = 20;
/** Keys looked up per statement (bound as one JSON parameter, but kept to a modest page). */
const KEYS_PER_LOOKUP = 500;
/** Tries when a concurrent import of the same keys wins the race: each retry re-reads which keys exist. */
const RACE_ATTEMPTS = 3;

export type ImportEventInput = Pick<LogChangeInput, "entity_path" | "change_type" | "entity_type" | "diff" | "reasoning" | "agent" | "git_commit" | "project" | "changeset_id" | "rename_from"> & {
  timestamp: string;
  import_key: string;
};

export const importItemSchema = z.object({
  index: z.number().int().describe("The event's position in the call."),
  import_key: z.string().describe("Its import_key."),
  status: z.enum(["imported", "skipped"]).describe("imported: written now; skipped: the tenant already had this import_key."),
  id: z.string().describe('The new event\'s id (for a rename, the create on the new path), or "" when skipped.'),
});

export interface ImportResult {
  imported: number;
  skipped: number;
  ids: string[];
  items: z.input<typeof importItemSchema>[];
  warnings: string[];
}

/** A refusal that names the event it is about, with the code log_change would give. */
const atIndex = (index: number, err: unknown): unknown => (err instanceof ToolError ? new ToolError(err.code, `events[${index}]: ${err.message}`, { hint: err.hint, retryable: err.retryable }) : err);

/** The instant an imported event happened, in the ledger's fixed-width form; refused when unreadable or in the future. */
export function importTime(raw: string, now: Date): string {
  const at = parseIsoInstant(raw);
  if (!at) {
    throw new ToolError("invalid_timestamp", `timestamp '${raw.slice(0, 64)}' is not an ISO-8601 date-time`, {
      hint: "Pass when the change happened, e.g. 2024-03-01T09:30:00Z (a time without an offset is read as UTC).",
    });
  }
  if (at.getTime() > now.getTime() + FUTURE_SKEW_MS) {
    throw new ToolError("invalid_timestamp", `timestamp '${iso(at)}' is in the future`, {
      hint: "Imported events carry when they happened; log a change that happens now with log_change.",
    });
  }
  return iso(at);
}

/** The keys of `keys` this tenant already holds. */
async function existingKeys(ctx: Ctx, keys: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < keys.length; i += KEYS_PER_LOOKUP) {
    const rows = await dbOf(ctx)
      .select({ key: events.importKey })
      .from(events)
      .where(and(eq(events.tenantId, ctx.tenantId), inArray(events.importKey, jsonValues(keys.slice(i, i + KEYS_PER_LOOKUP)))))
      .all();
    for (const r of rows) if (r.key !== null) found.add(r.key);
  }
  return found;
}

const isKeyTaken = (err: unknown) => /UNIQUE constraint failed: events\.tenant_id, events\.import_key/.test(String(err));

/**
 * Validates every event first (a bad one refuses the whole call, naming its index, before anything
 * is written), then writes those whose import_key is new in one atomic batch. Imported events stay
 * out of the activity feed (they are history, not news) and are embedded by the scheduled backfill.
 */
export async function importEvents(ctx: Ctx, input: readonly ImportEventInput[], opts: { defaultProject?: string } = {}): Promise<ImportResult> {
  const now = ctx.clock.now();
  const keyAt = new Map<string, number>();
  input.forEach((ev, index) => {
    const key = ev.import_key.trim();
    try {
      if (key === "")
        throw new ToolError("invalid_import_key", "import_key must be a non-empty string", { hint: "Give each event the stable id of where it came from, e.g. git:owner/repo:<sha>:<path>." });
      if (key.length > IMPORT_KEY_MAX) throw new ToolError("invalid_import_key", `import_key is longer than ${IMPORT_KEY_MAX} characters`, { hint: "Shorten it, e.g. by hashing the long part." });
      const earlier = keyAt.get(key);
      if (earlier !== undefined) {
        throw new ToolError("duplicate_import_key", `import_key '${key.slice(0, 80)}' is also used by events[${earlier}]`, { hint: "Each event of a call needs its own import_key." });
      }
      if (ev.change_type === "supersede") {
        throw new ToolError("invalid_change_type", "change_type 'supersede' cannot be imported: it re-opens a removal by id", {
          hint: "Import the removal's history, and re-open it with log_change.",
        });
      }
    } catch (err) {
      throw atIndex(index, err);
    }
    keyAt.set(key, index);
  });
  const project = input.some((ev) => !ev.project?.trim()) ? (opts.defaultProject ?? (await defaultProject(ctx))) : "";
  const prepared = [];
  for (const [index, ev] of input.entries()) {
    try {
      const at = new Date(importTime(ev.timestamp, now));
      const { timestamp: _t, import_key: _k, ...change } = ev;
      const c = await prepareChange(ctx, change, { at, defaultProject: project, advice: false });
      // The key goes on the event the caller is told about; a rename's other half carries none.
      const rows: NewEvent[] = c.rows.map((r) => (r.id === c.id ? { ...r, importKey: ev.import_key.trim() } : r));
      prepared.push({ index, key: ev.import_key.trim(), id: c.id, rows, warnings: c.warnings });
    } catch (err) {
      throw atIndex(index, err);
    }
  }

  for (let attempt = 1; ; attempt++) {
    const taken = await existingKeys(
      ctx,
      prepared.map((p) => p.key),
    );
    const fresh = prepared.filter((p) => !taken.has(p.key));
    try {
      if (fresh.length > 0)
        await appendEvents(
          ctx,
          fresh.flatMap((p) => p.rows),
          [],
          { embedNow: false },
        );
    } catch (err) {
      // Another import wrote one of these keys since they were read: nothing of this batch landed.
      if (isKeyTaken(err) && attempt < RACE_ATTEMPTS) continue;
      if (isKeyTaken(err))
        throw new ToolError("conflict", "Another import of the same events is running; nothing was written.", { hint: "Retry the call: events already imported are skipped.", retryable: true });
      throw err;
    }
    const warnings = fresh.flatMap((p) => p.warnings.map((w) => `events[${p.index}]: ${w}`));
    return {
      imported: fresh.length,
      skipped: prepared.length - fresh.length,
      ids: fresh.map((p) => p.id),
      items: prepared.map((p) => ({ index: p.index, import_key: p.key, status: taken.has(p.key) ? "skipped" : "imported", id: taken.has(p.key) ? "" : p.id })),
      warnings: boundedWarnings(warnings),
    };
  }
}

/** At most WARNINGS_MAX warnings, and how many more there were. */
export function boundedWarnings(all: readonly string[]): string[] {
  if (all.length <= WARNINGS_MAX) return [...all];
  return [...all.slice(0, WARNINGS_MAX), `… and ${all.length - WARNINGS_MAX} more warning(s)`];
}
