import { z } from "zod";
import { invalidInput, ToolError } from "../../core/errors";
import { defineOp } from "../shared";
import { MAX_METADATA_JSON_CHARS, MAX_TAGS } from "../store/store";
import { globField, hashField, idGroups, metadataObjectField, metadataOf, noMatch, pathField, selectDocuments, tagsField } from "./model";

export const updateOp = defineOp({
  name: "update",
  category: "execute",
  description: "Change the metadata and tags of existing documents (by hash, name or glob pattern) without storing a new version.",
  params: z.object({
    hash: hashField.optional().describe("Document hash (full or a prefix of at least 8 characters)."),
    name: pathField.optional().describe("Document path or file name."),
    pattern: globField.optional().describe("Glob over stored paths, e.g. 'drafts/**'."),
    metadata: z.union([metadataObjectField, z.array(z.string().min(1).max(1024)).max(64)]).optional().describe("Metadata to merge in: 'key=value' strings or an object; a key set to null is removed."),
    tags: tagsField.optional().describe("Tags to add."),
    remove_tags: tagsField.optional().describe("Tags to remove."),
    dry_run: z.boolean().default(false).describe("Report what would change and change nothing."),
  }),
  async run(ctx, p) {
    if (p.metadata === undefined && p.tags === undefined && p.remove_tags === undefined) {
      throw invalidInput("update needs something to change: metadata, tags or remove_tags.", 'e.g. docs_execute {"operations": [{"op": "update", "params": {"name": "notes.md", "metadata": ["status=reviewed"]}}]}.');
    }
    const docs = await selectDocuments(ctx, p);
    if (docs.length === 0) throw noMatch(p.hash ?? p.name ?? p.pattern ?? "");
    const patch = JSON.stringify(metadataOf(p.metadata) ?? {});
    const add = JSON.stringify(p.tags ?? []);
    const remove = JSON.stringify(p.remove_tags ?? []);
    if (p.dry_run) return { matched: docs.length, updated: docs.map((d) => ({ path: d.path, hash: d.hash })), dry_run: true };
    // Each row is changed in one statement from its own current value, so two updates running
    // at once both land; the size bounds are checked on the result, in the same statement.
    const merged = `json_patch(metadata, ?3)`;
    const tags = `(SELECT json_group_array(value) FROM (SELECT value FROM json_each(tags) WHERE value NOT IN (SELECT value FROM json_each(?5))
                   UNION SELECT value FROM json_each(?4) WHERE value NOT IN (SELECT value FROM json_each(?5))))`;
    const results = await ctx.d1.batch<{ path: string; hash: string; tags: string; metadata: string }>(
      idGroups(docs).map((ids) =>
        ctx.d1
          .prepare(
            `UPDATE documents SET metadata = ${merged}, tags = ${tags}
             WHERE tenant_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND deleted_at IS NULL
               AND length(${merged}) <= ${MAX_METADATA_JSON_CHARS} AND json_array_length(${tags}) <= ${MAX_TAGS}
             RETURNING path, hash, tags, metadata`,
          )
          .bind(ctx.tenantId, ids, patch, add, remove),
      ),
    );
    const updated = results.flatMap((r) => r.results).map((r) => ({ path: r.path, hash: r.hash, tags: JSON.parse(r.tags) as string[], metadata: JSON.parse(r.metadata) as Record<string, unknown> }));
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
