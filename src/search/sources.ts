/**
 * The objects that get embeddings, and what text of each is embedded. One place, so the hash a
 * write records and the text the backfill embeds can never disagree.
 */

export type EmbedObjectType = "note" | "decision" | "document" | "code_chunk" | "change_event";

export interface EmbedSource {
  /** Loads the tenant's objects by id (bound: tenant id, then the ids as one JSON array: D1 binds at most 100 values). */
  select(): string;
  text(row: Record<string, unknown>): string;
  /** Equality-filterable metadata stored with the vector (needs a Vectorize metadata index per key). */
  metadata(row: Record<string, unknown>): Record<string, string>;
}

const str = (v: unknown) => (typeof v === "string" ? v : "");

export const EMBED_SOURCES: Record<EmbedObjectType, EmbedSource> = {
  note: {
    select: () => `SELECT id, project_id, kind, title, body FROM knowledge_notes WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
    text: (r) => noteEmbedText(str(r.title), str(r.body)),
    metadata: (r) => ({ object_type: "note", project_id: str(r.project_id), kind: str(r.kind) }),
  },
  decision: {
    select: () => `SELECT id, project_id, title, choice, context, rationale FROM decisions WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
    text: (r) => decisionEmbedText({ title: str(r.title), choice: str(r.choice), context: str(r.context), rationale: str(r.rationale) }),
    metadata: (r) => ({ object_type: "decision", project_id: str(r.project_id), kind: "" }),
  },
  // A document version (seed 003) is embedded while it is live: once replaced or deleted it is
  // not selected here, so the embedding pass drops its pending row. Only the start of its text
  // is read, since the embedder reads no more than MAX_EMBED_CHARS anyway.
  document: {
    select: () =>
      `SELECT d.id, d.path, s.title, substr(t.text, 1, ${DOCUMENT_EMBED_CHARS}) AS text
       FROM documents d JOIN doc_search s ON s.tenant_id = d.tenant_id AND s.doc_id = d.id
         JOIN doc_texts t ON t.tenant_id = d.tenant_id AND t.hash = d.hash AND t.status = 'text'
       WHERE d.tenant_id = ? AND d.deleted_at IS NULL AND d.id IN (SELECT value FROM json_each(?))`,
    text: (r) => documentEmbedText(str(r.title), str(r.path), str(r.text)),
    metadata: () => ({ object_type: "document", project_id: "", kind: "" }),
  },
  // A chunk of a repository's code index (src/code/). `scope` is its generation, so a query asks
  // for one index's vectors (Vectorize needs a metadata index on it: docs/operations.md: Deploying).
  code_chunk: {
    select: () => `SELECT id, path, symbol, text, generation FROM code_chunks WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
    text: (r) => codeChunkEmbedText(str(r.path), str(r.symbol), str(r.text)),
    metadata: (r) => ({ object_type: "code_chunk", project_id: "", kind: "", scope: str(r.generation) }),
  },
  // A change-ledger event (seed 000), for prior_attempts' fuzzy recall: queued by log_change.
  change_event: {
    select: () => `SELECT id, entity_path, change_type, reasoning FROM events WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
    text: (r) => changeEventEmbedText(str(r.entity_path), str(r.change_type), str(r.reasoning)),
    metadata: () => ({ object_type: "change_event", project_id: "", kind: "" }),
  },
};

/** What an agent would describe a change by: the entity's name, what was done, and why. */
export const changeEventEmbedText = (entityPath: string, changeType: string, reasoning: string) => `${entityPath}\n${changeType}: ${reasoning}`;

/** The text a code chunk's vector is made of: where it is, what it defines, and what it says. */
export const codeChunkEmbedText = (path: string, symbol: string, text: string) => `${path}${symbol ? ` ${symbol}` : ""}\n${text}`;

/** Characters of a document's text that go into its embedding (the embedder cuts at 4000 anyway). */
export const DOCUMENT_EMBED_CHARS = 4000;

export const documentEmbedText = (title: string, path: string, text: string) => `${title}\n${path}\n\n${text.slice(0, DOCUMENT_EMBED_CHARS)}`;

export const noteEmbedText = (title: string, body: string) => `${title}\n\n${body}`;

export const decisionEmbedText = (d: { title: string; choice: string; context: string; rationale: string }) => [d.title, d.choice, d.context, d.rationale].filter((s) => s.length > 0).join("\n\n");

/** Vector ids carry the object type and its UUID: under Vectorize's 64-byte cap and unique across tenants. */
export const vectorId = (type: EmbedObjectType, objectId: string) => `${type}:${objectId}`;

export function parseVectorId(id: string): { type: EmbedObjectType; objectId: string } | null {
  const i = id.indexOf(":");
  const type = id.slice(0, i);
  return i > 0 && type in EMBED_SOURCES ? { type: type as EmbedObjectType, objectId: id.slice(i + 1) } : null;
}
