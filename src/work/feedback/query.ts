import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { FEEDBACK_KINDS, FEEDBACK_STATUSES, historyEntrySchema, historyOf, listRequests, type RequestFilter, requestSchema } from "./model";

export const featureRequestQueryTool = defineTool({
  name: "feature_request_query",
  title: "Read filed feedback",
  toolset: "feedback",
  description:
    "Your tenant's filed requests with their current status (open → accepted → in_progress → shipped | declined) and the operators' resolution notes, newest first: how a filer learns the outcome. With id, the request's history of status moves too.",
  input: z.object({
    id: z.string().min(1).max(100).optional().describe("One request."),
    status: z.array(z.enum(FEEDBACK_STATUSES)).max(5).optional().describe("Only these statuses."),
    kind: z.enum(FEEDBACK_KINDS).optional().describe("Only this kind."),
    q: z.string().max(200).optional().describe("Case-insensitive text in title or body."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(requestSchema.extend({ history: z.array(historyEntrySchema).optional().describe("With id: every status move, oldest first.") })).describe("Requests, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const after = decodeKeyset(input.cursor, 1);
    const filter: RequestFilter = { id: input.id, statuses: input.status, kind: input.kind, q: input.q?.trim() };
    if (after) filter.beforeSeq = after[0];
    const rows = await listRequests(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.seq]);
    const items = page.map(({ seq: _seq, ...r }) => r);
    // One request asked for by id: how it got to its status too.
    if (input.id && items.length === 1) return { items: [{ ...items[0]!, history: await historyOf(ctx, items[0]!.id) }], ...cursor };
    return { items, ...cursor };
  },
  summarize: (r) => `${r.items.length} request(s).`,
});
