/** Attachments (seed 001): links and files on work objects; file bytes live in R2. */
import { z } from "zod";
import { uuidv7 } from "../db/ids";
import { iso } from "../db/time";
import type { Ctx } from "../mcp/context";
import { defineTool } from "../mcp/define-tool";
import { invalidInput, notFound, ToolError } from "../mcp/errors";
import { activityStatement, limitField } from "./common";
import { findObject } from "./collab";

export const ATTACHABLE = ["project", "task", "decision", "note", "comment", "handoff"] as const;
type Attachable = (typeof ATTACHABLE)[number];

/** Bytes accepted inline over MCP (base64 grows them by a third on the wire). */
export const INLINE_MAX_BYTES = 1024 * 1024;

const attachmentSchema = z.object({
  id: z.string().describe("Attachment id."),
  object_type: z.enum(ATTACHABLE).describe("What it is attached to."),
  object_id: z.string().describe("That object's id."),
  kind: z.enum(["file", "link"]).describe("file or link."),
  url: z.string().nullable().describe("The link, or null."),
  storage_path: z.string().nullable().describe("The file's path in this tenant's blob store, or null."),
  title: z.string().describe("Title."),
  filename: z.string().nullable().describe("File name, or null."),
  mime_type: z.string().nullable().describe("MIME type, or null."),
  size_bytes: z.number().int().nullable().describe("Size in bytes, or null."),
  created_by: z.string().describe("Who attached it."),
  created_at: z.string().describe("When."),
});
type Attachment = z.infer<typeof attachmentSchema>;
const COLUMNS = "id, object_type, object_id, kind, url, storage_path, title, filename, mime_type, size_bytes, created_by, created_at";

/** Blobs are namespaced by tenant: no path a caller writes can reach another tenant's files. */
const blobKey = (ctx: Ctx, path: string) => `${ctx.tenantId}/${path}`;

const STORAGE_PATH = z
  .string()
  .min(1)
  .max(500)
  .regex(/^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[\w. @+=,()-]+(?:\/[\w. @+=,()-]+)*$/, "storage_path is a relative path of plain segments (no leading /, no . or .. segments)");

async function resolveTarget(ctx: Ctx, type: Attachable, ref: string): Promise<{ id: string; projectId: string | null }> {
  if (type === "comment") {
    const row = await ctx.d1.prepare(`SELECT id, object_type, object_id FROM comments WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, ref).first<{ id: string }>();
    if (!row) throw notFound("comment", ref, "comment_query lists comments.");
    return { id: row.id, projectId: null };
  }
  return findObject(ctx, type === "handoff" ? "work_request" : type, ref);
}

export const attachAddTool = defineTool({
  name: "attach_add",
  title: "Attach a file or link",
  toolset: "collab",
  verbatim: ["content_base64"],
  description:
    "Attach a link (kind: link, url required) or a file (kind: file, storage_path required) to a project, task, decision, note, comment or handoff. A file's bytes are either sent inline as content_base64 (up to 1 MiB) and stored at storage_path, or already in this tenant's blob store at storage_path; size and MIME type are taken from the stored object. Attachments count as evidence for requires_evidence.",
  input: z.object({
    object_type: z.enum(ATTACHABLE).describe("project, task, decision, note, comment or handoff."),
    object_id: z.string().min(1).max(100).describe("The object's id (a task may be given by KEY-number, a project by key)."),
    kind: z.enum(["file", "link"]).describe("file or link."),
    url: z.string().url().max(2000).optional().describe("The link (kind: link)."),
    storage_path: STORAGE_PATH.optional().describe("Where the file is, or will be, in your tenant's blob store (kind: file), e.g. reports/2026-11/coverage.html."),
    content_base64: z.string().max(Math.ceil((INLINE_MAX_BYTES * 4) / 3) + 4).optional().describe("The file's bytes, base64-encoded (kind: file, up to 1 MiB); omit when the blob is already stored."),
    title: z.string().max(300).optional().describe("Title; defaults to the file name or URL."),
    filename: z.string().max(255).optional().describe("File name (default: the last segment of storage_path)."),
    mime_type: z.string().max(200).regex(/^[\w.+-]+\/[\w.+-]+$/, "mime_type looks like type/subtype").optional().describe("MIME type (default application/octet-stream, or the stored object's)."),
    size_bytes: z.number().int().min(0).optional().describe("Expected size; must match the stored bytes when given."),
  }),
  output: z.object({ attachment: attachmentSchema.describe("The attachment.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (input.kind === "link") {
      if (!input.url) throw invalidInput("A link attachment needs url.", "Pass url, or use kind: file with storage_path.");
      if (input.storage_path || input.content_base64) throw invalidInput("A link attachment takes no storage_path or content.", "Drop them, or use kind: file.");
      if (!/^https?:\/\//i.test(input.url)) throw invalidInput("Only http and https links can be attached.", "Pass an http(s) URL.");
    } else if (!input.storage_path) {
      throw invalidInput("A file attachment needs storage_path.", "Pass storage_path (and content_base64 to upload the bytes now).");
    } else if (input.url) {
      throw invalidInput("A file attachment takes no url.", "Drop url, or use kind: link.");
    }
    const target = await resolveTarget(ctx, input.object_type, input.object_id);

    let size: number | null = null;
    let mime: string | null = input.mime_type ?? null;
    if (input.kind === "file") {
      const key = blobKey(ctx, input.storage_path!);
      if (input.content_base64 !== undefined) {
        let bytes: Uint8Array;
        try {
          bytes = Uint8Array.from(atob(input.content_base64), (c) => c.charCodeAt(0));
        } catch {
          throw invalidInput("content_base64 is not valid base64.", "Encode the file's bytes with standard base64.");
        }
        if (bytes.length > INLINE_MAX_BYTES) throw invalidInput(`The file is ${bytes.length} bytes; at most ${INLINE_MAX_BYTES} can be sent inline.`, "Store large files in the blob store first and attach them by storage_path.");
        if (input.size_bytes !== undefined && input.size_bytes !== bytes.length) throw invalidInput(`size_bytes says ${input.size_bytes} but the content has ${bytes.length} bytes.`, "Fix size_bytes or omit it.");
        // A stored file is never replaced: attachments already pointing at it must keep their bytes.
        if (await ctx.env.BLOBS.head(key)) {
          throw new ToolError("blob_exists", `A file is already stored at '${input.storage_path}'.`, {
            hint: "Attach the stored file by storage_path alone (without content_base64), or upload to a new path.",
          });
        }
        await ctx.env.BLOBS.put(key, bytes, { httpMetadata: { contentType: mime ?? "application/octet-stream" } });
        size = bytes.length;
      } else {
        const head = await ctx.env.BLOBS.head(key);
        if (!head) throw new ToolError("blob_not_found", `Nothing is stored at '${input.storage_path}' in your blob store.`, { hint: "Send the bytes with content_base64, or upload the file first." });
        if (input.size_bytes !== undefined && input.size_bytes !== head.size) throw invalidInput(`size_bytes says ${input.size_bytes} but the stored file has ${head.size} bytes.`, "Fix size_bytes or omit it.");
        size = head.size;
        mime = mime ?? head.httpMetadata?.contentType ?? null;
      }
      mime = mime ?? "application/octet-stream";
    }
    const id = uuidv7();
    const filename = input.kind === "file" ? (input.filename ?? input.storage_path!.split("/").pop()!) : (input.filename ?? null);
    const title = input.title ?? filename ?? input.url ?? "";
    await ctx.d1.batch([
      ctx.d1
        .prepare(`INSERT INTO attachments (id, tenant_id, object_type, object_id, kind, url, storage_path, title, filename, mime_type, size_bytes, created_by, created_at)
                  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .bind(id, ctx.tenantId, input.object_type, target.id, input.kind, input.url ?? null, input.storage_path ?? null, title, filename, mime, size, ctx.actorId, iso(ctx.clock.now())),
      activityStatement(ctx, { verb: "attachment.added", objectType: input.object_type, objectId: target.id, projectId: target.projectId, summary: `${input.kind}: ${title}`.slice(0, 300), metadata: { attachment_id: id } }),
    ]);
    return { attachment: (await ctx.d1.prepare(`SELECT ${COLUMNS} FROM attachments WHERE id = ?`).bind(id).first<Attachment>())! };
  },
  summarize: (r) => `Attached ${r.attachment.kind} ${r.attachment.id}.`,
});

export const attachRemoveTool = defineTool({
  name: "attach_remove",
  title: "Remove an attachment",
  toolset: "collab",
  description: "Soft-remove an attachment: it leaves attachment_query and no longer counts as evidence; the record (and a file's bytes) are kept.",
  input: z.object({ attachment_id: z.string().min(1).max(100).describe("The attachment.") }),
  output: z.object({ removed: z.boolean().describe("False when it was already removed.") }),
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const row = await ctx.d1.prepare(`SELECT ${COLUMNS}, deleted_at FROM attachments WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, input.attachment_id).first<Attachment & { deleted_at: string | null }>();
    if (!row) throw notFound("attachment", input.attachment_id, "attachment_query lists an object's attachments.");
    if (row.deleted_at) return { removed: false };
    // The removal belongs on the same project timeline as the addition.
    const projectId = (await resolveTarget(ctx, row.object_type, row.object_id).catch(() => null))?.projectId ?? null;
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1.prepare(`UPDATE attachments SET deleted_at = ? WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL RETURNING id`).bind(iso(ctx.clock.now()), ctx.tenantId, row.id),
      activityStatement(ctx, { verb: "attachment.removed", objectType: row.object_type, objectId: row.object_id, projectId, summary: `removed ${row.title}`, metadata: { attachment_id: row.id }, ifPreviousChanged: true }),
    ]);
    return { removed: updated!.results.length > 0 };
  },
  summarize: (r) => (r.removed ? "Removed." : "Already removed."),
});

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
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const target = await resolveTarget(ctx, input.object_type, input.object_id);
    const rows = await ctx.d1
      .prepare(`SELECT ${COLUMNS} FROM attachments WHERE tenant_id = ? AND object_type = ? AND object_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ?`)
      .bind(ctx.tenantId, input.object_type, target.id, input.limit)
      .all<Attachment>();
    return { items: rows.results };
  },
  summarize: (r) => `${r.items.length} attachment(s).`,
});

export const attachmentTools = [attachAddTool, attachRemoveTool, attachmentQueryTool];
