import { z } from "zod";
import { iso } from "../../core/time";
import { pruneGraph } from "../graph/graph";
import { defineOp } from "../shared";
import { forgetDocumentEmbeddings } from "../store/text-index";
import { globField, markDeleted, noMatch, pathField, selectDocuments } from "./model";

export const deleteOp = defineOp({
  name: "delete",
  category: "execute",
  description: "Delete documents by name or glob pattern. Content another document or a snapshot still uses is kept; unused chunks are collected later.",
  cost: { items: "names" },
  params: z.object({
    name: pathField.optional().describe("Document path, file name or glob pattern (e.g. '*.tmp')."),
    names: z.array(pathField).min(1).max(100).optional().describe("Several names or patterns."),
    pattern: globField.optional().describe("Glob over stored paths."),
    dry_run: z.boolean().default(false).describe("List what would be deleted and delete nothing."),
  }),
  async run(ctx, p) {
    const docs = await selectDocuments(ctx, p);
    if (docs.length === 0) throw noMatch([p.name, ...(p.names ?? []), p.pattern].filter(Boolean).join(", "));
    if (p.dry_run) return { deleted: docs.map((d) => ({ path: d.path, hash: d.hash })), count: docs.length, dry_run: true };
    const now = iso(ctx.clock.now());
    const rows = await markDeleted(ctx, docs, now);
    // Search already hides deleted versions; this frees their vectors.
    await forgetDocumentEmbeddings(
      ctx,
      rows.map((r) => r.id),
    );
    // Graph rows of a deleted path are already invisible (edges count only while their source is
    // live); pruning only frees them, so a huge glob delete frees the first hundred and moves on.
    for (const path of [...new Set(rows.map((r) => r.path))].slice(0, 100)) await pruneGraph(ctx, path);
    const deleted = rows.map(({ path, hash }) => ({ path, hash }));
    return { deleted, count: deleted.length, dry_run: false };
  },
});
