import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { activityStatement } from "../shared";
import { findProject } from "../projects/model";
import { defaultRepository, linkedPaths, linkedPathsField, PATHS_DESCRIPTION, linkStatements, resolveLinks } from "../memory/model";
import { BODY_MAX, findNote, insertNoteStatement, normalizeTags, NOTE_KINDS, noteSchema, queueNoteEmbedding, secretWarnings, tagsField, TITLE_MAX, titleFrom, toNote } from "./model";

export const knowledgeWriteTool = defineTool({
  name: "knowledge_write",
  title: "Write a knowledge note",
  toolset: "knowledge",
  description: "Write down what you learned so the next agent need not.",
  input: z.object({
    body: z.string().trim().min(1).max(BODY_MAX).describe("The note (markdown)."),
    title: z.string().trim().min(1).max(TITLE_MAX).optional().describe("Title; defaults to the body's first line."),
    kind: z.enum(NOTE_KINDS).default("note").describe("Kind of note."),
    project_id: z.string().min(1).max(100).optional().describe("Project id or key; omit for a tenant-wide note."),
    tags: tagsField.optional(),
    paths: linkedPathsField(PATHS_DESCRIPTION).optional(),
  }),
  output: z.object({
    note: noteSchema.describe("The note as stored."),
    paths: z.array(z.string()).describe("Its linked paths, as owner/name:pattern."),
    embedding_status: z.literal("pending").describe("Always pending on write: the vector is made after the response."),
    warnings: z.array(z.string()).describe("Things worth a second look (e.g. a secret in the body), or []."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  keyedBatch: true,
  run: async (ctx, input) => {
    const project = input.project_id ? await findProject(ctx, input.project_id) : null;
    const id = uuidv7(ctx.clock.now().getTime());
    const now = iso(ctx.clock.now());
    const title = input.title ?? titleFrom(input.body);
    const links = input.paths?.length ? await resolveLinks(ctx, input.paths, () => defaultRepository(ctx, project?.id ?? null)) : [];
    const embedding = await queueNoteEmbedding(ctx, id, title, input.body);
    await ctx.d1.batch([
      ...(ctx.keyed?.open() ?? []),
      insertNoteStatement(ctx, { id, projectId: project?.id ?? null, kind: input.kind, title, body: input.body, tags: JSON.stringify(normalizeTags(input.tags ?? [])), now }),
      embedding.stmt,
      activityStatement(ctx, { verb: "knowledge.written", objectType: "note", objectId: id, projectId: project?.id ?? null, summary: `${input.kind}: ${title}`.slice(0, 300) }),
      ...linkStatements(ctx, "note", id, links, now, { replace: false }),
    ]);
    embedding.afterCommit();
    const note = toNote(await findNote(ctx, id), true);
    // The background embedding may already have finished; the write's own answer stays "pending".
    return {
      note: { ...note, embedding_status: "pending" as const },
      paths: links.length > 0 ? await linkedPaths(ctx, "note", id) : [],
      embedding_status: "pending" as const,
      warnings: secretWarnings(`${title}\n${input.body}`),
    };
  },
  summarize: (r) => `Wrote ${r.note.kind} ${r.note.id}: ${r.note.title} (embedding pending).`,
});
