import { sql } from "drizzle-orm";
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { clearMarkStatement, currentLinks, defaultRepository, linkedPaths, linkedPathsField, linkStatements, resolveLinks, sameLinks } from "../memory/model";
import { BODY_MAX, findNote, normalizeTags, noteSchema, queueNoteEmbedding, secretWarnings, tagsField, TITLE_MAX, toNote, updateNoteStatement } from "./model";

export const knowledgeUpdateTool = defineTool({
  name: "knowledge_update",
  title: "Update a knowledge note",
  toolset: "knowledge",
  description: "Patch a note's title, body or tags (tags replaced whole).",
  input: z.object({
    note_id: z.string().min(1).max(100).describe("The note."),
    patch: z
      .object({
        title: z.string().trim().min(1).max(TITLE_MAX).optional().describe("New title."),
        body: z.string().trim().min(1).max(BODY_MAX).optional().describe("New body."),
        tags: tagsField.optional(),
      })
      .strict()
      .optional()
      .describe("The fields to change; the rest stay."),
    paths: linkedPathsField("Replace its paths.").optional(),
    still_holds: z.boolean().optional().describe("Clears its stale mark."),
    expected_version: z.number().int().min(1).optional().describe("Fail with version_conflict unless the note is at this version."),
  }),
  output: z.object({
    note: noteSchema.describe("The note after the change."),
    paths: z.array(z.string()).describe("Its linked paths, as owner/name:pattern."),
    changed: z.array(z.string()).describe("The fields that changed ([] when the patch matched the note)."),
    reembedding: z.boolean().describe("True when the text changed and a new embedding is pending."),
    warnings: z.array(z.string()).describe("Things worth a second look, or []."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const patch = input.patch ?? {};
    if (patch.title === undefined && patch.body === undefined && patch.tags === undefined && input.paths === undefined && !input.still_holds) {
      throw invalidInput("patch names no field to change.", "Pass at least one of patch.title, patch.body, patch.tags, or paths; or still_holds: true to confirm the note.");
    }
    const before = await findNote(ctx, input.note_id);
    if (input.expected_version !== undefined && input.expected_version !== before.version) {
      throw new ToolError("version_conflict", `Note ${before.id} is at version ${before.version}, not ${input.expected_version}.`, {
        hint: "Re-read it (knowledge_search or the note id), merge your change, and retry with the current version.",
      });
    }
    const next = {
      title: patch.title ?? before.title,
      body: patch.body ?? before.body,
      tags: patch.tags !== undefined ? JSON.stringify(normalizeTags(patch.tags)) : before.tags,
    };
    const changed: string[] = (["title", "body", "tags"] as const).filter((k) => next[k] !== before[k]);
    const links = input.paths !== undefined ? await resolveLinks(ctx, input.paths, () => defaultRepository(ctx, before.project_id)) : null;
    if (links && !sameLinks(links, await currentLinks(ctx, "note", before.id))) changed.push("paths");
    // Read before the write unless the write moves them: the answer right after the write stays one read.
    const pathsBefore = changed.includes("paths") ? null : await linkedPaths(ctx, "note", before.id);
    const now = iso(ctx.clock.now());
    if (changed.length === 0) {
      // Nothing to write but the confirmation: the note still holds as it is.
      if (input.still_holds) await clearMarkStatement(ctx, "note", before.id, now).run();
      const note = toNote(input.still_holds ? await findNote(ctx, before.id) : before, true);
      return { note, paths: pathsBefore!, changed: [], reembedding: false, warnings: [] };
    }
    const reembedding = changed.includes("title") || changed.includes("body");
    const embedding = reembedding ? await queueNoteEmbedding(ctx, before.id, next.title, next.body) : null;
    // The links and the mark follow only if this call's compare-and-swap took: the note is then at the next version, written now by the caller.
    const took = sql`EXISTS (SELECT 1 FROM knowledge_notes g WHERE g.tenant_id = ${ctx.tenantId} AND g.id = ${before.id} AND g.version = ${before.version + 1}
      AND g.updated_at = ${now} AND g.updated_by = ${ctx.actorId})`;
    const [updated] = await ctx.d1.batch<{ id: string }>([
      updateNoteStatement(ctx, before.id, before.version, next, now),
      activityStatement(ctx, {
        verb: "knowledge.updated",
        objectType: "note",
        objectId: before.id,
        projectId: before.project_id,
        summary: `${next.title}: ${changed.join(", ")}`.slice(0, 300),
        ifPreviousChanged: true,
      }),
      // Queued even if the update lost a race: the embedder embeds the note's current text whatever hash was queued.
      ...(embedding ? [embedding.stmt] : []),
      ...(links ? linkStatements(ctx, "note", before.id, links, now, { replace: true, guard: took }) : []),
      // Written anew, the note is as of now: a push before this no longer concerns it.
      clearMarkStatement(ctx, "note", before.id, now, took),
    ]);
    embedding?.afterCommit();
    if (updated!.results.length === 0) {
      throw new ToolError("version_conflict", `Note ${before.id} changed while this call ran.`, { hint: "Re-read it and retry.", retryable: true });
    }
    const note = toNote(await findNote(ctx, before.id), true);
    return {
      note: reembedding ? { ...note, embedding_status: "pending" as const } : note,
      paths: pathsBefore ?? (await linkedPaths(ctx, "note", before.id)),
      changed,
      reembedding,
      warnings: reembedding ? secretWarnings(`${next.title}\n${next.body}`) : [],
    };
  },
  summarize: (r) => (r.changed.length ? `Updated ${r.note.id}: ${r.changed.join(", ")}${r.reembedding ? " (re-embedding)" : ""}.` : `No change to ${r.note.id}.`),
});
