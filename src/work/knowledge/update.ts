import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
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
      .describe("The fields to change; the rest stay."),
    expected_version: z.number().int().min(1).optional().describe("Fail with version_conflict unless the note is at this version."),
  }),
  output: z.object({
    note: noteSchema.describe("The note after the change."),
    changed: z.array(z.string()).describe("The fields that changed ([] when the patch matched the note)."),
    reembedding: z.boolean().describe("True when the text changed and a new embedding is pending."),
    warnings: z.array(z.string()).describe("Things worth a second look, or []."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const { patch } = input;
    if (patch.title === undefined && patch.body === undefined && patch.tags === undefined) {
      throw invalidInput("patch names no field to change.", "Pass at least one of patch.title, patch.body, patch.tags.");
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
    const changed = (["title", "body", "tags"] as const).filter((k) => next[k] !== before[k]);
    if (changed.length === 0) return { note: toNote(before, true), changed: [], reembedding: false, warnings: [] };
    const reembedding = changed.includes("title") || changed.includes("body");
    const now = iso(ctx.clock.now());
    const embedding = reembedding ? await queueNoteEmbedding(ctx, before.id, next.title, next.body) : null;
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
    ]);
    embedding?.afterCommit();
    if (updated!.results.length === 0) {
      throw new ToolError("version_conflict", `Note ${before.id} changed while this call ran.`, { hint: "Re-read it and retry.", retryable: true });
    }
    const note = toNote(await findNote(ctx, before.id), true);
    return {
      note: reembedding ? { ...note, embedding_status: "pending" as const } : note,
      changed,
      reembedding,
      warnings: reembedding ? secretWarnings(`${next.title}\n${next.body}`) : [],
    };
  },
  summarize: (r) => (r.changed.length ? `Updated ${r.note.id}: ${r.changed.join(", ")}${r.reembedding ? " (re-embedding)" : ""}.` : `No change to ${r.note.id}.`),
});
