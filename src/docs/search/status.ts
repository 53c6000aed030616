import { z } from "zod";
import { defineOp } from "../shared";
import { storeStatus } from "../store/store";
import { fileTypeCounts, storeBreakdown } from "./model";

export const statusOp = defineOp({
  name: "status",
  category: "query",
  description: "Storage statistics: documents, bytes, unique chunks, deduplicated bytes and ratio; optionally a breakdown by index state and by file type.",
  params: z.object({
    detailed: z.boolean().default(false).describe("Include a breakdown: documents by index state, collections, snapshots, versions kept."),
    file_types: z.boolean().default(false).describe("Include counts and bytes per file extension."),
  }),
  async run(ctx, p) {
    const out: Record<string, unknown> = { ...(await storeStatus(ctx)) };
    if (p.detailed) {
      const { states, counts } = await storeBreakdown(ctx);
      const byState = Object.fromEntries(states.map((r) => [String(r.state), Number(r.n)]));
      out.detailed = {
        text_indexed: byState.text ?? 0,
        binary: (byState.binary ?? 0) + (byState.failed ?? 0),
        pending_index: byState.pending ?? 0,
        ...counts,
      };
    }
    if (p.file_types) {
      const rows = await fileTypeCounts(ctx);
      out.file_types = rows.map((r) => ({ extension: r.ext ? `.${r.ext}` : "(none)", documents: r.documents, bytes: r.bytes }));
    }
    return out;
  },
});
