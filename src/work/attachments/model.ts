/** Attachments (seed 001): links and files on work objects; file bytes live in R2. */
import { z } from "zod";
import { confirmFirst } from "../../core/confirm";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { activityStatement, limitField } from "../shared";
import { findObject } from "../collab/model";

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
  blob_version: z.number().int().nullable().describe("Which version of the file at storage_path this attachment holds (a later upload with expected_version adds a version and leaves this one's bytes alone), or null for a link."),
  created_by: z.string().describe("Who attached it."),
  created_at: z.string().describe("When."),
});
type Attachment = z.infer<typeof attachmentSchema>;
const COLUMNS = "id, object_type, object_id, kind, url, storage_path, title, filename, mime_type, size_bytes, blob_version, created_by, created_at";

/**
 * Where a file put in the bucket out of band (not through attach_add) lives. Blobs are namespaced
 * by tenant: no path a caller writes can reach another tenant's files. Uploads through attach_add
 * go to keys of their own under `<tenant>/~v/` (`~` is not allowed in a storage_path).
 */
const outOfBandKey = (ctx: Ctx, path: string) => `${ctx.tenantId}/${path}`;
/** Where attach_add's uploads of a tenant live: `<prefix><uuid>/<storage_path>`, a key per upload. */
export const uploadPrefix = (tenantId: string) => `${tenantId}/~v/`;

interface BlobVersion {
  version: number;
  object_key: string;
  sha256: string | null;
  size_bytes: number;
  mime_type: string;
}

/**
 * The newest version stored at a path. An object put in the bucket out of band, with no version
 * claimed yet, is version 1, `registered: false` until a write claims it.
 */
async function latestBlob(ctx: Ctx, path: string): Promise<{ row: BlobVersion; registered: boolean } | null> {
  const row = await ctx.d1
    .prepare(`SELECT version, object_key, sha256, size_bytes, mime_type FROM blob_versions WHERE tenant_id = ? AND storage_path = ? ORDER BY version DESC LIMIT 1`)
    .bind(ctx.tenantId, path)
    .first<BlobVersion>();
  if (row) return { row, registered: true };
  const head = await ctx.env.BLOBS.head(outOfBandKey(ctx, path));
  if (!head) return null;
  return {
    row: { version: 1, object_key: head.key, sha256: null, size_bytes: head.size, mime_type: head.httpMetadata?.contentType ?? "application/octet-stream" },
    registered: false,
  };
}

/** Claims a version of a path: of two writers claiming the same version, the first one's row stands. */
function claimStatement(ctx: Ctx, path: string, v: BlobVersion, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(`INSERT INTO blob_versions (tenant_id, storage_path, version, object_key, sha256, size_bytes, mime_type, created_by, created_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
    .bind(ctx.tenantId, path, v.version, v.object_key, v.sha256, v.size_bytes, v.mime_type, ctx.actorId, now);
}

interface FileAttachment {
  id: string;
  objectType: Attachable;
  targetId: string;
  projectId: string | null;
  path: string;
  title: string;
  filename: string;
  mimeType: string | null;
  now: string;
}

/**
 * Runs `claims`, then attaches version `version` of the path, in one batch. With `sha256`, the
 * attachment is made only if that version holds those bytes, so a writer whose claim lost to
 * different bytes attaches nothing, while one that lost to the same bytes attaches the winner's.
 */
async function attachVersion(ctx: Ctx, f: FileAttachment, version: number, sha256: string | null, claims: D1PreparedStatement[]): Promise<{ attachment: Attachment | null; stored: BlobVersion | null }> {
  const results = await ctx.d1.batch<Attachment & BlobVersion>([
    ...claims,
    ctx.d1
      .prepare(`INSERT INTO attachments (id, tenant_id, object_type, object_id, kind, url, storage_path, title, filename, mime_type, size_bytes, blob_version, created_by, created_at)
                SELECT ?, tenant_id, ?, ?, 'file', NULL, storage_path, ?, ?, COALESCE(?, mime_type), size_bytes, version, ?, ?
                FROM blob_versions WHERE tenant_id = ? AND storage_path = ? AND version = ? AND (? IS NULL OR sha256 = ?)`)
      .bind(f.id, f.objectType, f.targetId, f.title, f.filename, f.mimeType, ctx.actorId, f.now, ctx.tenantId, f.path, version, sha256, sha256),
    activityStatement(ctx, { verb: "attachment.added", objectType: f.objectType, objectId: f.targetId, projectId: f.projectId, summary: `file: ${f.title}`.slice(0, 300), metadata: { attachment_id: f.id }, ifPreviousChanged: true }),
    ctx.d1.prepare(`SELECT version, object_key, sha256, size_bytes, mime_type FROM blob_versions WHERE tenant_id = ? AND storage_path = ? AND version = ?`).bind(ctx.tenantId, f.path, version),
    ctx.d1.prepare(`SELECT ${COLUMNS} FROM attachments WHERE id = ?`).bind(f.id),
  ]);
  const [stored, attachment] = results.slice(-2);
  return { stored: (stored!.results[0] as BlobVersion | undefined) ?? null, attachment: (attachment!.results[0] as Attachment | undefined) ?? null };
}

async function sha256Bytes(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

const differentFileStored = (path: string, version: number) =>
  new ToolError("conflict", `Different bytes are already stored at '${path}' (version ${version}); nothing was stored or attached.`, {
    hint: `To store yours as its next version, send them again with expected_version: ${version} (attachments to earlier versions keep their bytes). To attach the stored file, omit content_base64. Or upload to another storage_path.`,
  });

const staleVersion = (path: string, expected: number, current: number | null) =>
  new ToolError("version_conflict", current === null
    ? `Nothing is stored at '${path}' yet (expected version ${expected}); nothing was stored or attached.`
    : `'${path}' is at version ${current}, not ${expected}; nothing was stored or attached.`, {
    hint: current === null ? "Drop expected_version to store the first version." : `Check what version ${current} holds before replacing it, then retry with expected_version: ${current}.`,
  });

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
    "Attach a link (kind: link, url required) or a file (kind: file, storage_path required) to a project, task, decision, note, comment or handoff. A file's bytes are either sent inline as content_base64 (up to 1 MiB) and stored at storage_path, or already in this tenant's blob store at storage_path; size and MIME type are taken from the stored object. A stored file is never overwritten: sending different bytes to a used storage_path is refused with conflict unless expected_version names the version they replace, and then they become the next version (attachments to earlier versions keep their bytes). Sending the bytes already stored there attaches that version. Attachments count as evidence for requires_evidence.",
  input: z.object({
    object_type: z.enum(ATTACHABLE).describe("project, task, decision, note, comment or handoff."),
    object_id: z.string().min(1).max(100).describe("The object's id (a task may be given by KEY-number, a project by key)."),
    kind: z.enum(["file", "link"]).describe("file or link."),
    url: z.string().url().max(2000).optional().describe("The link (kind: link)."),
    storage_path: STORAGE_PATH.optional().describe("Where the file is, or will be, in your tenant's blob store (kind: file), e.g. reports/2026-11/coverage.html."),
    content_base64: z.string().max(Math.ceil((INLINE_MAX_BYTES * 4) / 3) + 4).optional().describe("The file's bytes, base64-encoded (kind: file, up to 1 MiB); omit when the blob is already stored."),
    expected_version: z.number().int().min(1).max(1_000_000).optional().describe("With content_base64: replace the file at storage_path, which must be at this version (else version_conflict); the bytes become the next version."),
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
      if (input.storage_path || input.content_base64 !== undefined || input.expected_version !== undefined) throw invalidInput("A link attachment takes no storage_path, content or expected_version.", "Drop them, or use kind: file.");
      if (!/^https?:\/\//i.test(input.url)) throw invalidInput("Only http and https links can be attached.", "Pass an http(s) URL.");
    } else if (!input.storage_path) {
      throw invalidInput("A file attachment needs storage_path.", "Pass storage_path (and content_base64 to upload the bytes now).");
    } else if (input.url) {
      throw invalidInput("A file attachment takes no url.", "Drop url, or use kind: link.");
    } else if (input.expected_version !== undefined && input.content_base64 === undefined) {
      throw invalidInput("expected_version replaces a stored file, so it needs content_base64.", "Send the new bytes as content_base64, or drop expected_version to attach the stored file.");
    }
    const target = await resolveTarget(ctx, input.object_type, input.object_id);
    const id = uuidv7();
    const now = iso(ctx.clock.now());

    if (input.kind === "link") {
      const title = input.title ?? input.filename ?? input.url!;
      await ctx.d1.batch([
        ctx.d1
          .prepare(`INSERT INTO attachments (id, tenant_id, object_type, object_id, kind, url, storage_path, title, filename, mime_type, size_bytes, created_by, created_at)
                    VALUES (?, ?, ?, ?, 'link', ?, NULL, ?, ?, ?, NULL, ?, ?)`)
          .bind(id, ctx.tenantId, input.object_type, target.id, input.url!, title, input.filename ?? null, input.mime_type ?? null, ctx.actorId, now),
        activityStatement(ctx, { verb: "attachment.added", objectType: input.object_type, objectId: target.id, projectId: target.projectId, summary: `link: ${title}`.slice(0, 300), metadata: { attachment_id: id } }),
      ]);
      return { attachment: (await ctx.d1.prepare(`SELECT ${COLUMNS} FROM attachments WHERE id = ?`).bind(id).first<Attachment>())! };
    }

    const path = input.storage_path!;
    const filename = input.filename ?? path.split("/").pop()!;
    const title = input.title ?? filename;
    const file: FileAttachment = { id, objectType: input.object_type, targetId: target.id, projectId: target.projectId, path, title, filename, mimeType: input.mime_type ?? null, now };
    const latest = await latestBlob(ctx, path);

    if (input.content_base64 === undefined) {
      if (!latest) throw new ToolError("blob_not_found", `Nothing is stored at '${path}' in your blob store.`, { hint: "Send the bytes with content_base64, or upload the file first." });
      if (input.size_bytes !== undefined && input.size_bytes !== latest.row.size_bytes) throw invalidInput(`size_bytes says ${input.size_bytes} but the stored file has ${latest.row.size_bytes} bytes.`, "Fix size_bytes or omit it.");
      const attached = await attachVersion(ctx, file, latest.row.version, null, latest.registered ? [] : [claimStatement(ctx, path, latest.row, now)]);
      return { attachment: attached.attachment! };
    }

    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.from(atob(input.content_base64), (c) => c.charCodeAt(0));
    } catch {
      throw invalidInput("content_base64 is not valid base64.", "Encode the file's bytes with standard base64.");
    }
    if (bytes.length > INLINE_MAX_BYTES) throw invalidInput(`The file is ${bytes.length} bytes; at most ${INLINE_MAX_BYTES} can be sent inline.`, "Store large files in the blob store first and attach them by storage_path.");
    if (input.size_bytes !== undefined && input.size_bytes !== bytes.length) throw invalidInput(`size_bytes says ${input.size_bytes} but the content has ${bytes.length} bytes.`, "Fix size_bytes or omit it.");
    const sha256 = await sha256Bytes(bytes);

    let version: number;
    if (input.expected_version === undefined) {
      if (latest) {
        // The same bytes sent twice are one write, not a replacement: attach what is stored.
        if (latest.row.sha256 !== sha256) throw differentFileStored(path, latest.row.version);
        return { attachment: (await attachVersion(ctx, file, latest.row.version, sha256, [])).attachment! };
      }
      version = 1;
    } else {
      if (!latest || latest.row.version !== input.expected_version) throw staleVersion(path, input.expected_version, latest?.row.version ?? null);
      version = input.expected_version + 1;
    }

    // A key no other upload uses: a racing upload to the same path can never write over these bytes.
    // Dying between this put and the batch below leaves an object no row names: the
    // attachment_orphans sweep (attachment-sweep.ts) deletes it after a grace time.
    const objectKey = `${uploadPrefix(ctx.tenantId)}${uuidv7()}/${path}`;
    const mime = input.mime_type ?? "application/octet-stream";
    await ctx.env.BLOBS.put(objectKey, bytes, { httpMetadata: { contentType: mime }, customMetadata: { storage_path: path, sha256 }, sha256 });
    let attached: Awaited<ReturnType<typeof attachVersion>>;
    try {
      const claims = [
        ...(latest && !latest.registered ? [claimStatement(ctx, path, latest.row, now)] : []),
        claimStatement(ctx, path, { version, object_key: objectKey, sha256, size_bytes: bytes.length, mime_type: mime }, now),
      ];
      attached = await attachVersion(ctx, file, version, sha256, claims);
    } catch (err) {
      // The batch may have committed before the error reached us: delete the object only if no
      // version holds it, and keep it when that cannot be told (an orphan is better than a loss).
      const holder = await ctx.d1.prepare(`SELECT object_key FROM blob_versions WHERE tenant_id = ? AND storage_path = ? AND version = ?`)
        .bind(ctx.tenantId, path, version).first<{ object_key: string }>().catch(() => ({ object_key: objectKey }));
      if (holder?.object_key !== objectKey) await ctx.env.BLOBS.delete(objectKey);
      throw err;
    }
    // Lost the claim (or stored nothing): the object is nobody's, so it goes.
    if (attached.stored?.object_key !== objectKey) await ctx.env.BLOBS.delete(objectKey);
    if (!attached.attachment) {
      if (input.expected_version !== undefined) throw staleVersion(path, input.expected_version, version);
      throw differentFileStored(path, version);
    }
    return { attachment: attached.attachment };
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
  confirms: true,
  run: async (ctx, input) => {
    const row = await ctx.d1.prepare(`SELECT ${COLUMNS}, deleted_at FROM attachments WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, input.attachment_id).first<Attachment & { deleted_at: string | null }>();
    if (!row) throw notFound("attachment", input.attachment_id, "attachment_query lists an object's attachments.");
    if (row.deleted_at) return { removed: false };
    if (row.created_by !== ctx.actorId) {
      await confirmFirst(ctx, { key: "confirm_remove", message: `Remove ${row.kind} attachment '${row.title}', which another actor added?` });
    }
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
