import { z } from "zod";
import { boundedJson } from "../../core/bounds";
import { sha256Hex, uuidv7 } from "../../db/ids";
import { iso, resolveSince } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import type { Ctx } from "../../core/context";
import { invalidInput } from "../../core/errors";
import { actorRefField, cursorField, decodeKeyset, limitField, resolveActor, keysetPage } from "../shared";
import { stableStringify } from "../../core/idempotency";
import { findProject } from "../projects/model";
import { findRun, runFilterValue } from "../runs/model";
import { activityByHashStatement, type ActivityFilter, type ActivityRow, activityRowSchema, findObject, insertActivityStatement, listActivity, OBJECT_TYPES, toActivity } from "./model";

export const activityLogTool = defineTool({
  name: "activity_log",
  title: "Log activity",
  toolset: "collab",
  description:
    "Append a milestone to the activity log (verb + summary). Routine writes already record their own activity; use this for what is worth narrating. Append-only and de-duplicated: the same entry from the same actor is recorded once.",
  input: z.object({
    verb: z
      .string()
      .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/, "verb is dotted lower-case words, e.g. deploy.finished")
      .max(100)
      .describe("What happened, as dotted words (e.g. deploy.finished)."),
    summary: z.string().trim().min(1).max(2000).describe("One or two sentences."),
    object_type: z.enum(OBJECT_TYPES).optional().describe("The object it is about."),
    object_id: z.string().min(1).max(100).optional().describe("The object's id (with object_type)."),
    severity: z.enum(["info", "warn", "critical"]).default("info").describe("info (default), warn or critical."),
    status: z.string().max(50).optional().describe("A status word, kept in metadata."),
    run_id: z.string().min(1).max(100).optional().describe("The run it belongs to (a run_key or run id of your tenant); defaults to your current run."),
    metadata: boundedJson(z.record(z.string(), z.unknown()), { maxBytes: 8192, maxDepth: 8 }).optional().describe("Extra structured data (up to 8KB as JSON, 8 levels deep)."),
  }),
  output: z.object({ activity: activityRowSchema.describe("The entry."), deduplicated: z.boolean().describe("True when the same entry was already logged and is returned instead.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    if ((input.object_type === undefined) !== (input.object_id === undefined)) {
      throw invalidInput("object_type and object_id go together.", "Pass both to attach the entry to an object, or neither.");
    }
    const metadata = { ...(input.metadata ?? {}), ...(input.status ? { status: input.status } : {}) };
    const target = input.object_type ? await findObject(ctx, input.object_type, input.object_id!) : null;
    const projectId = target?.projectId ?? null;
    const explicitRun = input.run_id ? (await findRun(ctx, input.run_id)).id : null;
    // Only a run named explicitly tells entries apart: the same milestone logged again from a later session is still a duplicate.
    const hash = await sha256Hex(
      stableStringify([ctx.actorId, input.verb, input.summary, input.object_type ?? "", target?.id ?? "", input.severity, explicitRun ? { ...metadata, run_id: explicitRun } : metadata]),
    );
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    const [, existing] = await ctx.d1.batch<ActivityRow>([
      insertActivityStatement(ctx, {
        id,
        at: now,
        actorId: ctx.actorId,
        verb: input.verb,
        objectType: input.object_type ?? "",
        objectId: target?.id ?? "",
        projectId,
        summary: input.summary,
        severity: input.severity,
        sessionId: ctx.sessionId,
        runId: explicitRun ?? ctx.runId ?? null,
        metadata: JSON.stringify(metadata),
        contentHash: hash,
      }),
      activityByHashStatement(ctx, hash),
    ]);
    const row = existing!.results[0]!;
    return { activity: toActivity(row), deduplicated: row.id !== id };
  },
  summarize: (r) => (r.deduplicated ? `Already logged as ${r.activity.id}.` : `Logged ${r.activity.verb}.`),
});

/** A since/until bound as the ISO time it names, or undefined when not given. */
function timeBound(ctx: Ctx, bound: string | undefined): string | undefined {
  if (!bound) return undefined;
  const at = resolveSince(bound, ctx.clock.now());
  if (at === null) throw invalidInput(`could not parse '${bound}' as a time`, "Use 15m, 24h, 7d, 5mo, 1y or an ISO-8601 time.");
  return at;
}

export const activityQueryTool = defineTool({
  name: "activity_query",
  title: "Read activity",
  toolset: "collab",
  description: "The activity feed, newest first: filter by project, actor, object, verb, run or time window.",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Project id or key."),
    actor_id: actorRefField("Only this actor's activity.").optional(),
    object_type: z.string().max(50).optional().describe("Only activity on this kind of object."),
    object_id: z.string().max(100).optional().describe("Only activity on this object."),
    verb: z.string().max(100).optional().describe("Only this verb (e.g. task.claimed); a trailing .* matches a family (task.*)."),
    run_id: z.string().min(1).max(100).optional().describe("Only activity attributed to this run (run_key or run id)."),
    since: z.string().max(64).optional().describe("From (15m, 24h, 7d, 5mo, 1y or ISO-8601)."),
    until: z.string().max(64).optional().describe("Up to (ISO-8601, or a relative window back from now)."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(activityRowSchema).describe("Activity, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const family = input.verb?.endsWith(".*");
    const filter: ActivityFilter = {
      projectId: input.project_id ? (await findProject(ctx, input.project_id)).id : undefined,
      actorId: input.actor_id ? await resolveActor(ctx, input.actor_id) : undefined,
      objectType: input.object_type || undefined,
      objectId: input.object_id || undefined,
      verbPrefix: family ? input.verb!.slice(0, -1) : undefined,
      verb: family ? undefined : input.verb || undefined,
      runId: input.run_id ? await runFilterValue(ctx, input.run_id) : undefined,
      since: timeBound(ctx, input.since),
      until: timeBound(ctx, input.until),
    };
    const after = decodeKeyset(input.cursor, 1);
    if (after) filter.beforeSeq = after[0];
    const rows = await listActivity(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.seq]);
    return { items: page.map(toActivity), ...cursor };
  },
  summarize: (r) => `${r.items.length} activity item(s).`,
});
