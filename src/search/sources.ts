/**
 * The objects that get embeddings, and what text of each is embedded. One place, so the hash a
 * write records and the text the backfill embeds can never disagree.
 */

export type EmbedObjectType = "note" | "decision";

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
};

export const noteEmbedText = (title: string, body: string) => `${title}\n\n${body}`;

export const decisionEmbedText = (d: { title: string; choice: string; context: string; rationale: string }) =>
  [d.title, d.choice, d.context, d.rationale].filter((s) => s.length > 0).join("\n\n");

/** Vector ids carry the object type and its UUID: under Vectorize's 64-byte cap and unique across tenants. */
export const vectorId = (type: EmbedObjectType, objectId: string) => `${type}:${objectId}`;

export function parseVectorId(id: string): { type: EmbedObjectType; objectId: string } | null {
  const i = id.indexOf(":");
  const type = id.slice(0, i);
  return i > 0 && type in EMBED_SOURCES ? { type: type as EmbedObjectType, objectId: id.slice(i + 1) } : null;
}
