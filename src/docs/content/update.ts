import { z } from "zod";
import { invalidInput, ToolError } from "../../core/errors";
import { defineOp } from "../shared";
import { MAX_METADATA_JSON_CHARS, MAX_TAGS } from "../store/store";
import { applyUpdate, globField, hashField, metadataObjectField, metadataOf, noMatch, pathField, selectDocuments, tagsField } from "./model";

export const updateOp = defineOp({
  name: "update",
  category: "execute",
  description: "Change the metadata and tags of existing documents (by hash, name or glob pattern) without storing a new version.",
  params: z.object({
    hash: hashField.optional().describe("Document hash (full or a prefix of at least 8 characters)."),
    name: pathField.optional().describe("Document path or file name."),
    pattern: globField.optional().describe("Glob over stored paths, e.g. 'drafts/**'."),
    metadata: z
      .union([metadataObjectField, z.array(z.string().min(1).max(1024)).max(64)])
      .optional()
      .describe("Metadata to merge in: 'key=value' strings or an object; a key set to null is removed."),
    tags: tagsField.optional().describe("Tags to add."),
    remove_tags: tagsField.optional().describe("Tags to remove."),
    dry_run: z.boolean().default(false).describe("Report what would change and change nothing."),
  }),
  async run(ctx, p) {
    if (p.metadata === undefined && p.tags === undefined && p.remove_tags === undefined) {
      throw invalidInput(
        "update needs something to change: metadata, tags or remove_tags.",
        'e.g. docs_execute {"operations": [{"op": "update", "params": {"name": "notes.md", "metadata": ["status=reviewed"]}}]}.',
      );
    }
    const docs = await selectDocuments(ctx, p);
    if (docs.length === 0) throw noMatch(p.hash ?? p.name ?? p.pattern ?? "");
    const patch = JSON.stringify(metadataOf(p.metadata) ?? {});
    const add = JSON.stringify(p.tags ?? []);
    const remove = JSON.stringify(p.remove_tags ?? []);
    if (p.dry_run) return { matched: docs.length, updated: docs.map((d) => ({ path: d.path, hash: d.hash })), dry_run: true };
    const rows = await applyUpdate(ctx, docs, { patch, add, remove });
    const updated = rows.map((r) => ({ path: r.path, hash: r.hash, tags: JSON.parse(r.tags) as string[], metadata: JSON.parse(r.metadata) as Record<string, unknown> }));
    if (updated.length < docs.length) {
      const done = new Set(updated.map((u) => u.path));
      const missed = docs.filter((d) => !done.has(d.path)).map((d) => d.path);
      throw new ToolError("update_incomplete", `${missed.length} of ${docs.length} documents were not updated: ${missed.slice(0, 5).join(", ")}.`, {
        hint: `Either they were replaced or deleted meanwhile, or the result would pass ${MAX_TAGS} tags or ${MAX_METADATA_JSON_CHARS} characters of metadata. The others were updated.`,
      });
    }
    return { matched: docs.length, updated, dry_run: false };
  },
});
