/** path_reservations: who holds what in a repository, and what a proposed change would run into. */
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { findRepositoryId } from "../repos/model";
import { cursorField, decodeKeyset, keysetPage, limitField, resolveActor } from "../shared";

/** Conflicts one answer names; a change touching more asks in parts. */
const MAX_CONFLICTS = 200;
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
    limit: limitField(100, 500),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(reservationSchema).describe("Live reservations, oldest first."),
    conflicts: z
      .array(z.object({ path: z.string().describe("A path of the change."), reservation: reservationSchema.describe("Someone else's exclusive reservation covering it.") }))
      .describe(`With paths: what stands in your way (empty: go ahead); at most ${MAX_CONFLICTS}.`),
    conflicts_truncated: z.boolean().describe(`More than ${MAX_CONFLICTS} conflicts: fewer paths per call tell the rest.`),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page of items."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const paths = input.paths ? [...new Set(input.paths.map(normalizePath))] : [];
    const repositoryId = await findRepositoryId(ctx, input.repository_id);
    const holder = input.actor_id ? await resolveActor(ctx, input.actor_id) : undefined;
    const now = iso(ctx.clock.now());
    const after = decodeKeyset(input.cursor, 2);
    const rows = await liveReservations(ctx.d1, ctx.tenantId, repositoryId, now, { after: after ? [String(after[0]), String(after[1])] : null, limit: input.limit + 1, actorId: holder });
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.created_at, last.id]);
    const all = paths.length > 0 ? await writeConflicts(ctx.d1, ctx.tenantId, repositoryId, ctx.actorId, paths, now) : [];
    const conflicts = all.slice(0, MAX_CONFLICTS).map((c) => ({ path: c.path, reservation: c.held }));
    return { items: page, conflicts, conflicts_truncated: all.length > MAX_CONFLICTS, ...cursor };
  },
  summarize: (r) =>
    `${r.items.length} live reservation(s)${r.next_cursor ? " (more: next_cursor)" : ""}${r.conflicts.length > 0 ? `, ${r.conflicts.length}${r.conflicts_truncated ? "+" : ""} conflict(s)` : ""}.`,
});
