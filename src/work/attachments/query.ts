import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { limitField } from "../shared";
import { ATTACHABLE, attachmentSchema, listAttachments, resolveTarget } from "./model";

export const attachmentQueryTool = defineTool({
  name: "attachment_query",
  title: "List attachments",
  toolset: "collab",
  description: "The live (not removed) attachments on an object, newest first.",
  input: z.object({
    object_type: z.enum(ATTACHABLE).describe("Kind of object."),
    object_id: z.string().min(1).max(100).describe("The object's id (task KEY-number and project key accepted)."),
    limit: limitField(50, 200),
  }),
  output: z.object({ items: z.array(attachmentSchema).describe("Attachments, newest first.") }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const target = await resolveTarget(ctx, input.object_type, input.object_id);
    return { items: await listAttachments(ctx, input.object_type, target.id, input.limit) };
  },
  summarize: (r) => `${r.items.length} attachment(s).`,
});
