import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import {
  ATTACHABLE,
  attachmentSchema,
  attachVersion,
  blobVersionKey,
  claimStatement,
  differentFileStored,
  getAttachment,
  insertLinkAttachmentStatement,
  type FileAttachment,
  INLINE_MAX_BYTES,
  latestBlob,
  resolveTarget,
  sha256Bytes,
  staleVersion,
  STORAGE_PATH,
  uploadPrefix,
} from "./model";

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
    content_base64: z
      .string()
      .max(Math.ceil((INLINE_MAX_BYTES * 4) / 3) + 4)
      .optional()
      .describe("The file's bytes, base64-encoded (kind: file, up to 1 MiB); omit when the blob is already stored."),
    expected_version: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe("With content_base64: replace the file at storage_path, which must be at this version (else version_conflict); the bytes become the next version."),
    title: z.string().max(300).optional().describe("Title; defaults to the file name or URL."),
    filename: z.string().max(255).optional().describe("File name (default: the last segment of storage_path)."),
    mime_type: z
      .string()
      .max(200)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, "mime_type looks like type/subtype")
      .optional()
      .describe("MIME type (default application/octet-stream, or the stored object's)."),
    size_bytes: z.number().int().min(0).optional().describe("Expected size; must match the stored bytes when given."),
  }),
  output: z.object({ attachment: attachmentSchema.describe("The attachment.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (input.kind === "link") {
      if (!input.url) throw invalidInput("A link attachment needs url.", "Pass url, or use kind: file with storage_path.");
      if (input.storage_path || input.content_base64 !== undefined || input.expected_version !== undefined)
        throw invalidInput("A link attachment takes no storage_path, content or expected_version.", "Drop them, or use kind: file.");
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
        insertLinkAttachmentStatement(ctx, {
          id,
          objectType: input.object_type,
          objectId: target.id,
          url: input.url!,
          title,
          filename: input.filename ?? null,
          mimeType: input.mime_type ?? null,
          now,
        }),
        activityStatement(ctx, {
          verb: "attachment.added",
          objectType: input.object_type,
          objectId: target.id,
          projectId: target.projectId,
          summary: `link: ${title}`.slice(0, 300),
          metadata: { attachment_id: id },
        }),
      ]);
      return { attachment: (await getAttachment(ctx, id))! };
    }

    const path = input.storage_path!;
    const filename = input.filename ?? path.split("/").pop()!;
    const title = input.title ?? filename;
    const file: FileAttachment = { id, objectType: input.object_type, targetId: target.id, projectId: target.projectId, path, title, filename, mimeType: input.mime_type ?? null, now };
    const latest = await latestBlob(ctx, path);

    if (input.content_base64 === undefined) {
      if (!latest) throw new ToolError("blob_not_found", `Nothing is stored at '${path}' in your blob store.`, { hint: "Send the bytes with content_base64, or upload the file first." });
      if (input.size_bytes !== undefined && input.size_bytes !== latest.row.size_bytes)
        throw invalidInput(`size_bytes says ${input.size_bytes} but the stored file has ${latest.row.size_bytes} bytes.`, "Fix size_bytes or omit it.");
      const attached = await attachVersion(ctx, file, latest.row.version, null, latest.registered ? [] : [claimStatement(ctx, path, latest.row, now)]);
      return { attachment: attached.attachment! };
    }

    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.from(atob(input.content_base64), (c) => c.charCodeAt(0));
    } catch {
      throw invalidInput("content_base64 is not valid base64.", "Encode the file's bytes with standard base64.");
    }
    if (bytes.length > INLINE_MAX_BYTES)
      throw invalidInput(`The file is ${bytes.length} bytes; at most ${INLINE_MAX_BYTES} can be sent inline.`, "Store large files in the blob store first and attach them by storage_path.");
    if (input.size_bytes !== undefined && input.size_bytes !== bytes.length)
      throw invalidInput(`size_bytes says ${input.size_bytes} but the content has ${bytes.length} bytes.`, "Fix size_bytes or omit it.");
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
    // attachment_orphans sweep (sweep.ts) deletes it after a grace time.
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
      const holder = await blobVersionKey(ctx, path, version).catch(() => ({ object_key: objectKey }));
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
