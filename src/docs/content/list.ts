import { z } from "zod";
import { defineOp } from "../shared";
import { currentScope, scopeMatcher } from "../sessions/model";
import { globMatcher } from "../../core/glob";
import { collectionField, type DocRow, documentView, globField, listDocuments } from "./model";

export const MAX_LIST_LIMIT = 1000;

const params = z.object({
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(100).describe(`Maximum documents (1–${MAX_LIST_LIMIT}, default 100).`),
  offset: z.number().int().min(0).max(1_000_000).default(0).describe("Pagination offset (default 0)."),
  sort_by: z.enum(["name", "size", "created", "modified", "indexed"]).default("modified").describe("Sort key (default modified)."),
  sort_order: z.enum(["asc", "desc"]).default("desc").describe("asc or desc (default desc)."),
  recent: z.number().int().min(1).max(MAX_LIST_LIMIT).optional().describe("Only the N most recently modified documents (then sorted as asked)."),
  type: z.enum(["text", "binary"]).optional().describe("text: text-indexed documents; binary: stored but not text-indexed."),
  extension: z.string().min(1).max(32).optional().describe("File extension filter, with or without the dot (e.g. '.py')."),
  tags: z.array(z.string().min(1).max(128)).max(16).optional().describe("Only documents carrying every one of these tags."),
  collection: collectionField.optional().describe("Only documents in this collection."),
  path_pattern: globField.optional().describe("Glob over stored paths (e.g. 'docs/**/*.md'); without '/' it matches file names in any folder."),
  paths_only: z.boolean().default(false).describe("Return only the paths."),
  use_session: z.boolean().default(true).describe("Restrict to the current docs session's pins when a session with pins is active (default true)."),
});

export const listOp = defineOp({
  name: "list",
  category: "query",
  description: "List stored documents with filters (type, extension, tags, collection, path glob) and sorting; newest first by default.",
  params,
  async run(ctx, p) {
    const scope = scopeMatcher(p.use_session ? await currentScope(ctx) : null);
    const glob = p.path_pattern ? globMatcher([p.path_pattern]) : null;
    const keep = glob !== null || scope !== null ? (r: DocRow) => (!glob || glob(r.path)) && (!scope || scope(r.path, r.hash)) : null;
    const { rows, total } = await listDocuments(ctx, p, keep);
    const next = p.offset + rows.length < total ? { next_offset: p.offset + rows.length } : {};
    const scoped = scope ? { session_scoped: true } : {};
    if (p.paths_only) return { total, paths: rows.map((r) => r.path), ...next, ...scoped };
    return { total, documents: rows.map(documentView), ...next, ...scoped };
  },
});
