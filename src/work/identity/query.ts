import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { ACTOR_KINDS, type ActorFilter, actorSchema, listActors, toActor } from "./model";

export const actorQueryTool = defineTool({
  name: "actor_query",
  title: "Find actors",
  toolset: "identity",
  description: "Find actors by kind, group, capability or text, e.g. before assigning or sending a handoff.",
  input: z.object({
    kind: z.enum(ACTOR_KINDS).optional().describe("Only this kind."),
    group: z.string().max(100).optional().describe("Exact group."),
    capability: z.string().max(100).optional().describe("Actors that list this capability."),
    q: z.string().max(200).optional().describe("Case-insensitive text in external_ref, display name or role."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(actorSchema).describe("Matching actors."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page; absent on the last page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const after = decodeKeyset(input.cursor, 1);
    const filter: ActorFilter = {
      kind: input.kind,
      group: input.group || undefined,
      capability: input.capability || undefined,
      q: input.q?.trim() || undefined,
      afterName: after ? after[0] : undefined,
    };
    const rows = await listActors(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.name]);
    return {
      items: page.map(toActor),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} actor(s).`,
});
