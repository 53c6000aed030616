import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { ACTOR_KINDS, actorSchema, listActors, toActor } from "./model";

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
    const where = ["tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    if (input.kind) {
      where.push("kind = ?");
      params.push(input.kind);
    }
    if (input.group) {
      where.push("group_name = ?");
      params.push(input.group);
    }
    if (input.capability) {
      where.push("EXISTS (SELECT 1 FROM json_each(actors.capabilities) c WHERE c.value = ?)");
      params.push(input.capability);
    }
    if (input.q?.trim()) {
      where.push("(instr(lower(name), lower(?)) > 0 OR instr(lower(display_name), lower(?)) > 0 OR instr(lower(role), lower(?)) > 0)");
      params.push(input.q.trim(), input.q.trim(), input.q.trim());
    }
    const after = decodeKeyset(input.cursor, 1);
    if (after) {
      where.push("name > ?");
      params.push(after[0]);
    }
    const rows = await listActors(ctx, where, params, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.name]);
    return {
      items: page.map(toActor),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} actor(s).`,
});
