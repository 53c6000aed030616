/** path_reservations: who holds what in a repository, and what a proposed change would run into. */
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { findRepositoryId } from "../repos/model";
import { resolveActor } from "../shared";
import { normalizePath } from "./globs";
import { liveReservations, reservationSchema, writeConflicts } from "./model";

export const pathReservationsTool = defineTool({
  name: "path_reservations",
  title: "Who holds which paths",
  toolset: "coordination",
  description:
    "The live path reservations of a repository. With paths (the files a change would touch), also the conflicts: the paths someone else holds exclusively, which your commits, merges and cherry-picks through this server would be refused for. Call it before you start.",
  input: z.object({
    repository_id: z.string().min(1).max(200).describe("The registered repository (id or owner/name)."),
    paths: z.array(z.string().min(1).max(1024)).min(1).max(500).optional().describe("Files a proposed change touches, from the repository root."),
    actor_id: z.string().min(1).max(200).optional().describe('Only this holder\'s reservations (actor id, name or "me").'),
  }),
  output: z.object({
    items: z.array(reservationSchema).describe("Live reservations, oldest first."),
    conflicts: z
      .array(z.object({ path: z.string().describe("A path of the change."), reservation: reservationSchema.describe("Someone else's exclusive reservation covering it.") }))
      .describe("With paths: what stands in your way (empty: go ahead)."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const paths = input.paths ? [...new Set(input.paths.map(normalizePath))] : [];
    const repositoryId = await findRepositoryId(ctx, input.repository_id);
    const holder = input.actor_id ? await resolveActor(ctx, input.actor_id) : undefined;
    const now = iso(ctx.clock.now());
    const items = (await liveReservations(ctx.d1, ctx.tenantId, repositoryId, now)).filter((r) => holder === undefined || r.actor_id === holder);
    const conflicts = paths.length > 0 ? (await writeConflicts(ctx.d1, ctx.tenantId, repositoryId, ctx.actorId, paths, now)).map((c) => ({ path: c.path, reservation: c.held })) : [];
    return { items, conflicts };
  },
  summarize: (r) => `${r.items.length} live reservation(s)${r.conflicts.length > 0 ? `, ${r.conflicts.length} conflict(s)` : ""}.`,
});
