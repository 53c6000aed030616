import { z } from "zod";
import { defineOp } from "../shared";
import { currentScope, scopeMatcher } from "../sessions/model";
import { globMatcher } from "../../core/glob";
import { collectionField, DOC_COLUMNS, DOC_FROM, type DocRow, documentView, globField } from "./model";

const SORT_COLUMNS = { name: "d.name", size: "d.size", created: "d.created_at", modified: "d.modified_at", indexed: "d.indexed_at" } as const;

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
    const where = ["d.tenant_id = ?", "d.deleted_at IS NULL"];
    const binds: unknown[] = [ctx.tenantId];
    if (p.type === "text") where.push("t.status = 'text'");
    if (p.type === "binary") where.push("(t.status IS NULL OR t.status <> 'text')");
    if (p.extension) {
      where.push("d.name LIKE ? ESCAPE '\\'");
      binds.push(`%.${p.extension.replace(/^\./, "").replace(/[\\%_]/g, (c) => `\\${c}`)}`);
    }
    if (p.collection) {
      where.push("d.collection = ?");
      binds.push(p.collection);
    }
    for (const tag of p.tags ?? []) {
      where.push("EXISTS (SELECT 1 FROM json_each(d.tags) WHERE json_each.value = ?)");
      binds.push(tag);
    }
    const scope = scopeMatcher(p.use_session ? await currentScope(ctx) : null);
    const glob = p.path_pattern ? globMatcher([p.path_pattern]) : null;
    const order = `${SORT_COLUMNS[p.sort_by]} ${p.sort_order === "asc" ? "ASC" : "DESC"}, d.path ASC`;
    // Filters SQL cannot express (globs, session pins) are applied to the rows SQL returns; the
    // scan is bounded, and `recent` is a window over modification time taken before sorting.
    const needsScan = glob !== null || scope !== null;
    const inner = `SELECT ${DOC_COLUMNS} FROM ${DOC_FROM} WHERE ${where.join(" AND ")}`;
    const windowed = p.recent ? `SELECT * FROM (${inner} ORDER BY d.modified_at DESC LIMIT ${p.recent}) d` : inner;
    const sql = p.recent ? `${windowed} ORDER BY ${order.replace(/d\.(\w+)/g, "$1")}` : `${windowed} ORDER BY ${order}`;
    let rows: DocRow[];
    let total: number;
    if (needsScan) {
      const all = await ctx.d1.prepare(`${sql} LIMIT 20001`).bind(...binds).all<DocRow>();
      const kept = all.results.filter((r) => (!glob || glob(r.path)) && (!scope || scope(r.path, r.hash)));
      total = kept.length;
      rows = kept.slice(p.offset, p.offset + p.limit);
    } else {
      const [page, count] = await ctx.d1.batch<DocRow & { n: number }>([
        ctx.d1.prepare(`${sql} LIMIT ? OFFSET ?`).bind(...binds, p.limit, p.offset),
        ctx.d1.prepare(`SELECT COUNT(*) AS n FROM (${windowed})`).bind(...binds),
      ]);
      rows = page!.results;
      total = count!.results[0]!.n;
    }
    const next = p.offset + rows.length < total ? { next_offset: p.offset + rows.length } : {};
    const scoped = scope ? { session_scoped: true } : {};
    if (p.paths_only) return { total, paths: rows.map((r) => r.path), ...next, ...scoped };
    return { total, documents: rows.map(documentView), ...next, ...scoped };
  },
});
