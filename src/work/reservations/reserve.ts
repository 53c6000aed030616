/** path_reserve and path_release: an actor's hold on paths of a repository, through its ClaimsDO queue. */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { activityStatement } from "../shared";
import { findRepositoryId } from "../repos/model";
import { findTask, taskRefField } from "../tasks/model";
import { normalizePattern } from "./globs";
import { MAX_LIVE_RESERVATIONS, reservationSchema, reservationsStub } from "./model";
import { ToolError } from "../../core/errors";

const repositoryField = z.string().min(1).max(200).describe("The registered repository (id or owner/name).");
const patternsField = z
  .array(z.string().min(1).max(512))
  .min(1)
  .max(50)
  .describe("Paths or globs from the repository root: `*` within a folder, `**` any folders, a trailing / the whole folder (src/auth/ is src/auth/**).");

/** The distinct normalized patterns of a call, in the order given. */
const patternsOf = (raw: readonly string[]) => [...new Set(raw.map(normalizePattern))];

const conflictSchema = z.object({
  pattern: z.string().describe("The pattern you asked for."),
  held_by: z.string().describe("The actor holding an overlapping reservation."),
  held_pattern: z.string().describe("What they hold."),
  exclusive: z.boolean().describe("Whether their reservation is exclusive."),
  expires_at: z.string().describe("When their lease runs out unless renewed."),
  reservation_id: z.string().describe("Their reservation's id."),
});

export const pathReserveTool = defineTool({
  name: "path_reserve",
  title: "Reserve paths",
  toolset: "coordination",
  description:
    "Reserve paths or globs of a repository under a lease, before you edit them: exclusive (default) keeps everyone else's commits, merges and cherry-picks through this server off them; shared only keeps exclusive holders out. All or nothing: reserved: false lists who holds what. Reserving a pattern you hold renews it.",
  input: z.object({
    repository_id: repositoryField,
    paths: patternsField,
    exclusive: z.boolean().default(true).describe("true (default): nobody else writes or reserves these paths; false: shared with other shared holders."),
    lease_seconds: z.number().int().min(60).max(86_400).default(3600).describe("Lease length in seconds; reserve again to renew."),
    task_id: taskRefField("Tie the reservation to this task: finishing, cancelling or releasing the task releases it.").optional(),
    reason: z.string().max(500).default("").describe("Why you hold them, shown to whoever runs into them."),
  }),
  output: z.object({
    reserved: z.boolean().describe("Whether you hold every path now."),
    reservations: z.array(reservationSchema).describe("Your reservations of these paths, when reserved."),
    fencing_token: z.number().int().nullable().describe("The lease's fencing token (pass it as fencing_token on git writes), or null when not reserved."),
    renewed: z.array(z.string()).describe("Patterns you already held, now renewed under the same token."),
    conflicts: z.array(conflictSchema).describe("Who stands in the way, when not reserved."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  // Each pattern is a reservation row of its own.
  cost: { items: "paths" },
  run: async (ctx, input) => {
    const patterns = patternsOf(input.paths);
    const repositoryId = await findRepositoryId(ctx, input.repository_id);
    const taskId = input.task_id ? (await findTask(ctx, input.task_id)).id : null;
    const outcome = await reservationsStub(ctx, repositoryId).reservePaths({
      tenantId: ctx.tenantId,
      repositoryId,
      actorId: ctx.actorId,
      sessionId: ctx.sessionId,
      patterns,
      exclusive: input.exclusive,
      leaseSeconds: input.lease_seconds,
      taskId,
      reason: input.reason,
      nowMs: ctx.clock.now().getTime(),
    });
    if (!outcome.reserved && outcome.full) {
      throw new ToolError("too_many_reservations", `This repository already holds close to ${MAX_LIVE_RESERVATIONS} live reservations; nothing was reserved.`, {
        hint: "Reserve folders (src/auth/) rather than single files, and release what you are done with (path_release); path_reservations lists who holds what.",
        retryable: true,
      });
    }
    if (!outcome.reserved) {
      return {
        reserved: false,
        reservations: [],
        fencing_token: null,
        renewed: [],
        conflicts: outcome.conflicts.map((c) => ({
          pattern: c.pattern,
          held_by: c.held.actor_id,
          held_pattern: c.held.pattern,
          exclusive: c.held.exclusive,
          expires_at: c.held.expires_at,
          reservation_id: c.held.id,
        })),
      };
    }
    await activityStatement(ctx, {
      verb: "paths.reserved",
      objectType: "repository",
      objectId: repositoryId,
      summary: `${input.exclusive ? "reserved" : "shared"} ${patterns.join(", ").slice(0, 200)}`,
      metadata: { patterns, exclusive: input.exclusive, fencing_token: outcome.fencing_token, ...(taskId ? { task_id: taskId } : {}) },
    }).run();
    return { reserved: true, reservations: outcome.reservations, fencing_token: outcome.fencing_token, renewed: outcome.renewed, conflicts: [] };
  },
  summarize: (r) => (r.reserved ? `Reserved ${r.reservations.length} pattern(s), fencing token ${r.fencing_token}.` : `Not reserved: ${r.conflicts.length} conflict(s).`),
});

export const pathReleaseTool = defineTool({
  name: "path_release",
  title: "Release reserved paths",
  toolset: "coordination",
  description: "Release your reservations in a repository: the ones named by id or pattern, or all of yours there when you name none.",
  input: z.object({
    repository_id: repositoryField,
    reservation_ids: z.array(z.string().min(1).max(100)).min(1).max(50).optional().describe("Release these reservations."),
    paths: patternsField.optional().describe("Release the reservations of exactly these patterns."),
  }),
  output: z.object({ released: z.array(reservationSchema).describe("What was released (already released or expired ones are not listed).") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const patterns = input.paths ? patternsOf(input.paths) : undefined;
    const repositoryId = await findRepositoryId(ctx, input.repository_id);
    const released = await reservationsStub(ctx, repositoryId).releasePaths({
      tenantId: ctx.tenantId,
      repositoryId,
      actorId: ctx.actorId,
      ids: input.reservation_ids,
      patterns,
      nowMs: ctx.clock.now().getTime(),
    });
    if (released.length > 0) {
      await activityStatement(ctx, {
        verb: "paths.released",
        objectType: "repository",
        objectId: repositoryId,
        summary: `released ${released
          .map((x) => x.pattern)
          .join(", ")
          .slice(0, 200)}`,
        metadata: { patterns: released.map((x) => x.pattern) },
      }).run();
    }
    return { released };
  },
  summarize: (r) => `Released ${r.released.length} reservation(s).`,
});
