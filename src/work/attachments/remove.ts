import { z } from "zod";
import { confirmFirst } from "../../core/confirm";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { notFound } from "../../core/errors";
import { activityStatement } from "../shared";
import { findAnyAttachment, removeAttachmentStatement, resolveTarget } from "./model";

export const attachRemoveTool = defineTool({
  name: "attach_remove",
  title: "Remove an attachment",
  toolset: "collab",
  description: "Soft-remove an attachment: it leaves attachment_query and no longer counts as evidence; the record (and a file's bytes) are kept.",
  input: z.object({ attachment_id: z.string().min(1).max(100).describe("The attachment.") }),
  output: z.object({ removed: z.boolean().describe("False when it was already removed.") }),
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  confirms: true,
  run: async (ctx, input) => {
    const row = await findAnyAttachment(ctx, input.attachment_id);
    if (!row) throw notFound("attachment", input.attachment_id, "attachment_query lists an object's attachments.");
    if (row.deleted_at) return { removed: false };
    if (row.created_by !== ctx.actorId) {
      await confirmFirst(ctx, { key: "confirm_remove", message: `Remove ${row.kind} attachment '${row.title}', which another actor added?` });
    }
    // The removal belongs on the same project timeline as the addition.
    const projectId = (await resolveTarget(ctx, row.object_type, row.object_id).catch(() => null))?.projectId ?? null;
    const [updated] = await ctx.d1.batch<{ id: string }>([
      removeAttachmentStatement(ctx, row.id, iso(ctx.clock.now())),
      activityStatement(ctx, {
        verb: "attachment.removed",
        objectType: row.object_type,
        objectId: row.object_id,
        projectId,
        summary: `removed ${row.title}`,
        metadata: { attachment_id: row.id },
        ifPreviousChanged: true,
      }),
    ]);
    return { removed: updated!.results.length > 0 };
  },
  summarize: (r) => (r.removed ? "Removed." : "Already removed."),
});
