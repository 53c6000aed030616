import { z } from "zod";
import { defineOp } from "../shared";
import { storeStatus } from "../store/store";

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
      const [states, counts] = await ctx.d1.batch<Record<string, number | string | null>>([
        ctx.d1
          .prepare(
            `SELECT CASE WHEN d.indexed_at IS NULL THEN 'pending' ELSE COALESCE(t.status, 'binary') END AS state, COUNT(*) AS n FROM documents d LEFT JOIN doc_texts t ON t.tenant_id = d.tenant_id AND t.hash = d.hash
             WHERE d.tenant_id = ? AND d.deleted_at IS NULL GROUP BY 1`,
          )
          .bind(ctx.tenantId),
        ctx.d1
          .prepare(
            `SELECT (SELECT COUNT(*) FROM doc_collections WHERE tenant_id = ?1) AS collections,
                    (SELECT COUNT(*) FROM doc_snapshots WHERE tenant_id = ?1) AS snapshots,
                    (SELECT COUNT(*) FROM documents WHERE tenant_id = ?1 AND deleted_at IS NOT NULL) AS past_versions`,
          )
          .bind(ctx.tenantId),
      ]);
      const byState = Object.fromEntries(states!.results.map((r) => [String(r.state), Number(r.n)]));
      out.detailed = {
        text_indexed: byState.text ?? 0,
        binary: (byState.binary ?? 0) + (byState.failed ?? 0),
        pending_index: byState.pending ?? 0,
        ...(counts!.results[0] as Record<string, number>),
      };
    }
    if (p.file_types) {
      const rows = await ctx.d1
        .prepare(
          `SELECT CASE WHEN instr(name, '.') = 0 THEN '' ELSE lower(replace(name, rtrim(name, replace(name, '.', '')), '')) END AS ext,
                  COUNT(*) AS documents, SUM(size) AS bytes
           FROM documents WHERE tenant_id = ? AND deleted_at IS NULL GROUP BY 1 ORDER BY documents DESC, ext LIMIT 100`,
        )
        .bind(ctx.tenantId)
        .all<{ ext: string; documents: number; bytes: number }>();
      out.file_types = rows.results.map((r) => ({ extension: r.ext ? `.${r.ext}` : "(none)", documents: r.documents, bytes: r.bytes }));
    }
    return out;
  },
});
