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
  async run(ctx, params) {
    if (!params.use_session) return (await searchDocuments(ctx, params)) as unknown as Record<string, unknown>;
    // Most callers have no session with pins: the whole store is searched while the session is
    // read, and searched again within the pins when there are some.
    const scope = currentScope(ctx);
    const whole = searchDocuments(ctx, params);
    whole.catch(() => {}); // not awaited when the session narrows the search
    const pins = await scope;
    return (await (pins ? searchDocuments(ctx, params, pins) : whole)) as unknown as Record<string, unknown>;
  },
});
