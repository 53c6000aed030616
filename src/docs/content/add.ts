import { z } from "zod";
import { invalidInput } from "../../core/errors";
import { secretKinds } from "../../core/secrets";
import { githubImportParams, importFromGitHub } from "../github/import";
import { ingestDocument, ingestDocuments, type IngestResult } from "../store/ingest";
import type { Ctx } from "../../core/context";
import { noLocalFilesystem, quotedPath } from "../store/local-paths";
import { mimeFromName } from "../extract/mime";
import { defineOp } from "../shared";
import { MAX_PATH_CHARS, type PutDocumentInput } from "../store/store";
import { collectionField, labelField, metadataObjectField, metadataOf, mimeField, pathField, tagsField } from "./model";

/** Inline content is capped by what one MCP call may carry (2 MiB of arguments). */
export const MAX_INLINE_CHARS = 1024 * 1024;
const MAX_INLINE_BASE64 = Math.ceil(MAX_INLINE_CHARS / 3) * 4;

const github = githubImportParams.shape;

const params = z.object({
  name: pathField.optional().describe("Where the document is stored: a path such as 'notes/meeting.md' (required with inline content)."),
  content: z.string().max(MAX_INLINE_CHARS).optional().describe("Inline text content (UTF-8), up to 1 MiB characters."),
  content_base64: z.string().max(MAX_INLINE_BASE64).optional().describe("Inline binary content, base64-encoded, up to 1 MiB of bytes."),
  mime_type: mimeField.optional().describe("MIME type; by default derived from the name's extension."),
  disable_auto_mime: z.boolean().default(false).describe("Do not derive the MIME type from the name (stored as application/octet-stream unless mime_type is given)."),
  tags: tagsField.optional().describe("Document tags."),
  metadata: z
    .union([metadataObjectField, z.array(z.string().min(1).max(1024)).max(64)])
    .optional()
    .describe("Key-value metadata: an object, or 'key=value' strings."),
  collection: collectionField.optional().describe("Add the document to this collection (created on first use)."),
  snapshot_label: labelField.optional().describe("Also record this version in a new snapshot with this label."),
  // From GitHub: the import's own fields, one definition for add and watch.
  repo: github.repo.optional().describe("Import from this GitHub repository (owner/name) instead of inline content."),
  path: pathField.optional().describe("With repo: a file or folder in the repository ('' or '/' is the root)."),
  ref: github.ref,
  include: github.include,
  exclude: github.exclude,
  recursive: github.recursive.optional().describe("With repo and a folder: include subfolders (default true)."),
  prefix: github.prefix,
});

export const addOp = defineOp({
  name: "add",
  category: "execute",
  description:
    "Store a document from inline content (name + content or content_base64), or import a file or folder from a GitHub repository (repo, path, ref, include/exclude globs), with tags, metadata, a collection or a snapshot label; content-addressed and deduplicated.",
  params,
  normalize(raw) {
    const p = { ...raw };
    if (p.url !== undefined)
      throw invalidInput(
        "add stores local files or inline content. To fetch a URL, use 'download' with {url}.",
        'Send docs_execute {"operations": [{"op": "download", "params": {"url": …}}]} instead.',
      );
    for (const [from, to] of [
      ["directory_path", "path"],
      ["directoryPath", "path"],
      ["include_patterns", "include"],
      ["exclude_patterns", "exclude"],
    ] as const) {
      if (p[from] !== undefined && p[to] === undefined) {
        p[to] = p[from];
        delete p[from];
      }
    }
    if (Array.isArray(p.paths)) {
      if (p.paths.length > 1) throw invalidInput("add accepts one 'path' per call, not 'paths'.", "Send one add op per path, in one execute batch.");
      p.path = p.paths[0];
      delete p.paths;
    }
    if (Array.isArray(p.path)) throw invalidInput("add expects 'path' to be a string, not an array.", "Send one add op per path, in one execute batch.");
    if (p.repo !== undefined) {
      if (p.content !== undefined || p.content_base64 !== undefined || p.contentBase64 !== undefined) {
        throw invalidInput("add takes inline 'content' or a GitHub 'repo', not both.", "Send one add op for the inline document and another for the repository files.");
      }
      return p;
    }
    if ((p.content !== undefined || p.content_base64 !== undefined || p.contentBase64 !== undefined) && p.name === undefined) {
      throw invalidInput("add requires 'name' when providing inline 'content'.", 'Pass the path to store it under, e.g. {"name": "notes/meeting.md", "content": "…"}.');
    }
    // A path that is no path (another type, past the bound) is refused by the schema like any bad value.
    const readsDisk = typeof p.path === "string" && p.path.length <= MAX_PATH_CHARS;
    if (readsDisk && p.content === undefined && p.content_base64 === undefined && p.contentBase64 === undefined) {
      throw noLocalFilesystem(
        `add cannot read ${quotedPath(p.path as string)} from your disk`,
        'Send the file inline as {"name": "<path>", "content": "…"} (content_base64 for binary), fetch a public https URL with \'download\', or import from GitHub with {"repo": "owner/name", "path": "<file or folder>"}.',
      );
    }
    if (p.path !== undefined && p.name === undefined) {
      p.name = p.path;
      delete p.path;
    }
    return p;
  },
  async run(ctx, p) {
    if (p.repo !== undefined) return importRepo(ctx, p);
    const input = inlineInput(p);
    return answer(p, input, await ingestDocument(ctx, input));
  },
  // A run of inline adds is stored and indexed together (ingestDocuments); an import runs on its own, in its place.
  async runMany(ctx, all, stopAtFailure) {
    const answers: ({ ok: true; data: Record<string, unknown> } | { ok: false; error: unknown })[] = [];
    let pending: { p: AddParams; input: PutDocumentInput }[] = [];
    const flush = async (): Promise<boolean> => {
      if (pending.length === 0) return true;
      const ingested = await ingestDocuments(
        ctx,
        pending.map((x) => x.input),
        stopAtFailure,
      );
      ingested.forEach((r, k) => answers.push(r.ok ? { ok: true, data: answer(pending[k]!.p, pending[k]!.input, r.result) } : r));
      const stopped = stopAtFailure && ingested.some((r) => !r.ok);
      pending = [];
      return !stopped;
    };
    for (const p of all) {
      if (p.repo === undefined) {
        try {
          pending.push({ p, input: inlineInput(p) });
          continue;
        } catch (error) {
          if (!(await flush())) return answers;
          answers.push({ ok: false, error });
          if (stopAtFailure) return answers;
          continue;
        }
      }
      if (!(await flush())) return answers;
      try {
        answers.push({ ok: true, data: await importRepo(ctx, p) });
      } catch (error) {
        answers.push({ ok: false, error });
        if (stopAtFailure) return answers;
      }
    }
    await flush();
    return answers;
  },
});

type AddParams = z.output<typeof params>;

async function importRepo(ctx: Ctx, p: AddParams): Promise<Record<string, unknown>> {
  const { repo, path, ref, include, exclude, recursive, prefix, tags, metadata, collection, snapshot_label } = p;
  return { ...(await importFromGitHub(ctx, { repo: repo!, path: path ?? "", ref, include, exclude, recursive, prefix, tags, metadata: metadataOf(metadata), collection, snapshot_label })) };
}

/** An inline add's document, or the refusal of its content fields. */
function inlineInput(p: AddParams): PutDocumentInput {
  if (p.content !== undefined && p.content_base64 !== undefined) throw invalidInput("Pass either 'content' or 'content_base64', not both.", "Use content for text and content_base64 for binary.");
  if (p.content === undefined && p.content_base64 === undefined) {
    throw invalidInput("add needs inline 'content' (or 'content_base64') with 'name'.", 'Pass e.g. {"name": "notes/meeting.md", "content": "# Meeting"}.');
  }
  const bytes = p.content !== undefined ? new TextEncoder().encode(p.content) : decodeBase64(p.content_base64!);
  return {
    path: p.name!,
    bytes,
    mimeType: p.mime_type ?? (p.disable_auto_mime ? undefined : mimeFromName(p.name!)),
    tags: p.tags,
    metadata: metadataOf(p.metadata),
    collection: p.collection,
    snapshotLabel: p.snapshot_label,
  };
}

/** What an inline add answers once its document is stored. */
function answer(p: AddParams, input: PutDocumentInput, result: IngestResult): Record<string, unknown> {
  // Documents are stored byte for byte (their hash is their identity), so secrets are not
  // masked here as they are in notes: the caller is told instead.
  const kinds = p.content !== undefined ? secretKinds(p.content) : [];
  return {
    ...result,
    mime_type: input.mimeType ?? "application/octet-stream",
    ...(kinds.length > 0 ? { warnings: [`The content looks like it holds secrets (${kinds.join(", ")}); it was stored as given. Delete it and rotate them if they are real.`] } : {}),
  };
}

function decodeBase64(b64: string): Uint8Array {
  const clean = b64.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) {
    throw invalidInput("content_base64 is not valid base64.", "Encode the bytes with standard base64 (A–Z, a–z, 0–9, +, /, = padding).");
  }
  const bin = atob(clean);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
