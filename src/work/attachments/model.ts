/** Attachments (seed 001): links and files on work objects; file bytes live in R2. */
import { z } from "zod";
import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import { dbOf, statementOf } from "../../db/client";
import { attachments, blobVersions, comments } from "../../db/schema";
import type { Ctx } from "../../core/context";
import { notFound, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { findObject } from "../collab/model";

export const ATTACHABLE = ["project", "task", "decision", "note", "comment", "handoff"] as const;
type Attachable = (typeof ATTACHABLE)[number];

/** Bytes accepted inline over MCP (base64 grows them by a third on the wire). */
export const INLINE_MAX_BYTES = 1024 * 1024;

export const attachmentSchema = z.object({
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
  blob_version: z
    .number()
    .int()
    .nullable()
    .describe("Which version of the file at storage_path this attachment holds (a later upload with expected_version adds a version and leaves this one's bytes alone), or null for a link."),
  created_by: z.string().describe("Who attached it."),
  created_at: z.string().describe("When."),
});
export type Attachment = z.infer<typeof attachmentSchema>;

/** An attachment's fields, keyed by SQL column name so rows keep the shape the tools return. */
const attachmentFields = {
  id: attachments.id,
  object_type: attachments.objectType,
  object_id: attachments.objectId,
  kind: attachments.kind,
  url: attachments.url,
  storage_path: attachments.storagePath,
  title: attachments.title,
  filename: attachments.filename,
  mime_type: attachments.mimeType,
  size_bytes: attachments.sizeBytes,
  blob_version: attachments.blobVersion,
  created_by: attachments.createdBy,
  created_at: attachments.createdAt,
};

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

const blobVersionFields = {
  version: blobVersions.version,
  object_key: blobVersions.objectKey,
  sha256: blobVersions.sha256,
  size_bytes: blobVersions.sizeBytes,
  mime_type: blobVersions.mimeType,
};

/** One version of a path in the caller's tenant. */
const isBlobVersion = (ctx: Ctx, path: string, version: number) => and(eq(blobVersions.tenantId, ctx.tenantId), eq(blobVersions.storagePath, path), eq(blobVersions.version, version));

/**
 * The newest version stored at a path. An object put in the bucket out of band, with no version
 * claimed yet, is version 1, `registered: false` until a write claims it.
 */
export async function latestBlob(ctx: Ctx, path: string): Promise<{ row: BlobVersion; registered: boolean } | null> {
  const row = await dbOf(ctx)
    .select(blobVersionFields)
    .from(blobVersions)
    .where(and(eq(blobVersions.tenantId, ctx.tenantId), eq(blobVersions.storagePath, path)))
    .orderBy(desc(blobVersions.version))
    .limit(1)
    .get();
  if (row) return { row, registered: true };
  const head = await ctx.env.BLOBS.head(outOfBandKey(ctx, path));
  if (!head) return null;
  return {
    row: { version: 1, object_key: head.key, sha256: null, size_bytes: head.size, mime_type: head.httpMetadata?.contentType ?? "application/octet-stream" },
    registered: false,
  };
}

/** Claims a version of a path: of two writers claiming the same version, the first one's row stands. */
export function claimStatement(ctx: Ctx, path: string, v: BlobVersion, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(blobVersions)
      .values({
        tenantId: ctx.tenantId,
        storagePath: path,
        version: v.version,
        objectKey: v.object_key,
        sha256: v.sha256,
        sizeBytes: v.size_bytes,
        mimeType: v.mime_type,
        createdBy: ctx.actorId,
        createdAt: now,
      })
      .onConflictDoNothing(),
  );
}

export interface FileAttachment {
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
export async function attachVersion(
  ctx: Ctx,
  f: FileAttachment,
  version: number,
  sha256: string | null,
  claims: D1PreparedStatement[],
): Promise<{ attachment: Attachment | null; stored: BlobVersion | null }> {
  const db = dbOf(ctx);
  const results = await ctx.d1.batch<Attachment & BlobVersion>([
    ...claims,
    // Hand SQL: an INSERT…SELECT guard (it attaches only the version that holds the expected bytes).
    ctx.d1
      .prepare(
        `INSERT INTO attachments (id, tenant_id, object_type, object_id, kind, url, storage_path, title, filename, mime_type, size_bytes, blob_version, created_by, created_at)
                SELECT ?, tenant_id, ?, ?, 'file', NULL, storage_path, ?, ?, COALESCE(?, mime_type), size_bytes, version, ?, ?
                FROM blob_versions WHERE tenant_id = ? AND storage_path = ? AND version = ? AND (? IS NULL OR sha256 = ?)`,
      )
      .bind(f.id, f.objectType, f.targetId, f.title, f.filename, f.mimeType, ctx.actorId, f.now, ctx.tenantId, f.path, version, sha256, sha256),
    activityStatement(ctx, {
      verb: "attachment.added",
      objectType: f.objectType,
      objectId: f.targetId,
      projectId: f.projectId,
      summary: `file: ${f.title}`.slice(0, 300),
      metadata: { attachment_id: f.id },
      ifPreviousChanged: true,
    }),
    statementOf(
      ctx.d1,
      db
        .select(blobVersionFields)
        .from(blobVersions)
        .where(isBlobVersion(ctx, f.path, version)),
    ),
    statementOf(ctx.d1, db.select(attachmentFields).from(attachments).where(eq(attachments.id, f.id))),
  ]);
  const [stored, attachment] = results.slice(-2);
  return { stored: (stored!.results[0] as BlobVersion | undefined) ?? null, attachment: (attachment!.results[0] as Attachment | undefined) ?? null };
}

export async function sha256Bytes(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

export const differentFileStored = (path: string, version: number) =>
  new ToolError("conflict", `Different bytes are already stored at '${path}' (version ${version}); nothing was stored or attached.`, {
    hint: `To store yours as its next version, send them again with expected_version: ${version} (attachments to earlier versions keep their bytes). To attach the stored file, omit content_base64. Or upload to another storage_path.`,
  });

export const staleVersion = (path: string, expected: number, current: number | null) =>
  new ToolError(
    "version_conflict",
    current === null
      ? `Nothing is stored at '${path}' yet (expected version ${expected}); nothing was stored or attached.`
      : `'${path}' is at version ${current}, not ${expected}; nothing was stored or attached.`,
    {
      hint: current === null ? "Drop expected_version to store the first version." : `Check what version ${current} holds before replacing it, then retry with expected_version: ${current}.`,
    },
  );

export const STORAGE_PATH = z
  .string()
  .min(1)
  .max(500)
  .regex(/^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[\w. @+=,()-]+(?:\/[\w. @+=,()-]+)*$/, "storage_path is a relative path of plain segments (no leading /, no . or .. segments)");

export async function resolveTarget(ctx: Ctx, type: Attachable, ref: string): Promise<{ id: string; projectId: string | null }> {
  if (type === "comment") {
    const row = await dbOf(ctx)
      .select({ id: comments.id, object_type: comments.objectType, object_id: comments.objectId })
      .from(comments)
      .where(and(eq(comments.tenantId, ctx.tenantId), eq(comments.id, ref)))
      .get();
    if (!row) throw notFound("comment", ref, "comment_query lists comments.");
    return { id: row.id, projectId: null };
  }
  return findObject(ctx, type === "handoff" ? "work_request" : type, ref);
}

export interface LinkAttachmentInsert {
  id: string;
  objectType: string;
  objectId: string;
  url: string;
  title: string;
  filename: string | null;
  mimeType: string | null;
  now: string;
}

/** A link attachment (no stored bytes), added by the caller. */
export function insertLinkAttachmentStatement(ctx: Ctx, a: LinkAttachmentInsert): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx).insert(attachments).values({
      id: a.id,
      tenantId: ctx.tenantId,
      objectType: a.objectType,
      objectId: a.objectId,
      kind: "link",
      url: a.url,
      storagePath: null,
      title: a.title,
      filename: a.filename,
      mimeType: a.mimeType,
      sizeBytes: null,
      createdBy: ctx.actorId,
      createdAt: a.now,
    }),
  );
}

export async function getAttachment(ctx: Ctx, id: string): Promise<Attachment | null> {
  return ((await dbOf(ctx).select(attachmentFields).from(attachments).where(eq(attachments.id, id)).get()) as Attachment | undefined) ?? null;
}

/** The object key a blob version holds, or null when no such version exists. */
export async function blobVersionKey(ctx: Ctx, path: string, version: number): Promise<{ object_key: string } | null> {
  return (
    (await dbOf(ctx)
      .select({ object_key: blobVersions.objectKey })
      .from(blobVersions)
      .where(isBlobVersion(ctx, path, version))
      .get()) ?? null
  );
}

/** An object's live attachments, newest first. */
export async function listAttachments(ctx: Ctx, objectType: string, objectId: string, limit: number): Promise<Attachment[]> {
  return (await dbOf(ctx)
    .select(attachmentFields)
    .from(attachments)
    .where(and(eq(attachments.tenantId, ctx.tenantId), eq(attachments.objectType, objectType), eq(attachments.objectId, objectId), isNull(attachments.deletedAt)))
    .orderBy(desc(attachments.createdAt), desc(attachments.id))
    .limit(limit)
    .all()) as Attachment[];
}

/** An attachment, removed or not, or null. */
export async function findAnyAttachment(ctx: Ctx, id: string): Promise<(Attachment & { deleted_at: string | null }) | null> {
  return (
    ((await dbOf(ctx)
      .select({ ...attachmentFields, deleted_at: attachments.deletedAt })
      .from(attachments)
      .where(and(eq(attachments.tenantId, ctx.tenantId), eq(attachments.id, id)))
      .get()) as (Attachment & { deleted_at: string | null }) | undefined) ?? null
  );
}

/** Marks an attachment removed, once; returns the id when this call removed it. */
export function removeAttachmentStatement(ctx: Ctx, id: string, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(attachments)
      .set({ deletedAt: now })
      .where(and(eq(attachments.tenantId, ctx.tenantId), eq(attachments.id, id), isNull(attachments.deletedAt)))
      .returning({ id: attachments.id }),
  );
}

/** The object keys that any version at these storage paths holds (one query; the caller keeps `paths` small). */
export async function blobKeysAtPaths(db: D1Database, tenantId: string, paths: string[]): Promise<string[]> {
  const rows = await dbOf({ d1: db })
    .select({ object_key: blobVersions.objectKey })
    .from(blobVersions)
    .where(and(eq(blobVersions.tenantId, tenantId), inArray(blobVersions.storagePath, paths)))
    .all();
  return rows.map((r) => r.object_key);
}
