/** The document store's `search` op: the parameters and the handler; the search itself is ./model. */
import { currentScope } from "../sessions/model";
import { defineOp } from "../shared";
import { normalizeSearchParams, searchDocuments, searchParams } from "./model";

export const searchOp = defineOp({
  name: "search",
  category: "query",
  description:
    "Search live documents by content, path and name: keyword (bm25), semantic or hybrid (default), with optional fuzzy matching of misspelt words, a glob or tag filter, or a direct lookup by content hash (8+ hex characters). Returns {total, type, execution_time_ms, results: [{id, hash, title, path, score, snippet, line_start?, line_end?}]} or, with paths_only, {…, paths}.",
  params: searchParams,
  normalize: normalizeSearchParams,
  run: async (ctx, params) => (await searchDocuments(ctx, params, (params.use_session ? await currentScope(ctx) : null) ?? undefined)) as unknown as Record<string, unknown>,
});
