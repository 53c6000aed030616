/**
 * The dashboard's knowledge, skills and documents (docs/dashboard.md): one search over the three,
 * each ranked by its own tool, and one document's text, all read through the tools as the
 * signed-in person.
 */
import type { Context, Hono } from "hono";
import { ToolError } from "../core/errors";
import { NOTE_KINDS, type Note } from "../work/knowledge/model";
import type { Skill } from "../work/skills/model";
import { DocumentPage, KNOWLEDGE_PATH, KnowledgePage, NotePage, type DocView, type FoundNote, type KnowledgeData } from "../web/app/knowledge";
import { actorNames, param, read, toolPage, viewerOf, type AppEnv } from "./dashboard-pages";

const NOTES_SHOWN = 20;
const SKILLS_SHOWN = 100;
const DOCUMENTS_SHOWN = 50;
/** The most of a document's text one page shows; docs_query get returns the rest. */
const DOCUMENT_TEXT_MAX = 256 * 1024;
/** A document's page is named by its full content hash, which is never ambiguous. */
const DOCUMENT_HASH = /^[0-9a-f]{64}$/;

type Docs = { total: number; results?: DocView[]; documents?: DocView[]; warnings?: string[] };

/** One docs_query step, answered directly (docs_query answers a single step with its result). */
const docsStep = <T>(c: Context<AppEnv>, op: string, params: Record<string, unknown>) => read<T>(c.get("ctx"), "docs_query", { steps: [{ op, params }] });

async function knowledgeData(c: Context<AppEnv>): Promise<KnowledgeData> {
  const ctx = c.get("ctx");
  const q = param(c, "q", 500);
  const kind = param(c, "kind", 20);
  const lexical = c.req.query("lexical") === "1";
  if (kind && !(NOTE_KINDS as readonly string[]).includes(kind)) throw new ToolError("invalid_input", `Unknown note kind '${kind}'.`, { hint: `Note kinds: ${NOTE_KINDS.join(", ")}.` });
  const [notes, skills, docs, names] = await Promise.all([
    read<KnowledgeData["notes"]>(ctx, "knowledge_search", { q: q || undefined, kind: kind || undefined, lexical_only: lexical, top_k: NOTES_SHOWN }),
    read<{ items: Skill[] }>(ctx, "skill_list", { q: q ? q.slice(0, 200) : undefined, limit: SKILLS_SHOWN }),
    q
      ? docsStep<Docs>(c, "search", { query: q, type: lexical ? "keyword" : "hybrid", limit: DOCUMENTS_SHOWN, use_session: false })
      : docsStep<Docs>(c, "list", { limit: DOCUMENTS_SHOWN, use_session: false }),
    actorNames(ctx),
  ]);
  return {
    now: ctx.clock.now(),
    q,
    kind,
    kinds: NOTE_KINDS,
    lexical,
    notes: { ...notes, items: notes.items as FoundNote[] },
    skills: skills.items,
    names,
    documents: { items: docs.results ?? docs.documents ?? [], total: docs.total, searched: Boolean(q), warnings: docs.warnings ?? [] },
  };
}

type Got = { hash: string; path: string; size: number; mime_type: string; modified: string; tags: string[]; content?: string; content_truncated?: boolean };

async function documentPage(c: Context<AppEnv>) {
  const hash = (c.req.param("id") ?? "").toLowerCase();
  if (!DOCUMENT_HASH.test(hash)) throw new ToolError("invalid_input", "That is not a document hash.", { hint: "Documents are named by their SHA-256 (64 hex characters); pick one from the list." });
  const doc = await docsStep<Got>(c, "get", { hash, include_content: true, max_bytes: DOCUMENT_TEXT_MAX });
  return DocumentPage({
    viewer: await viewerOf(c),
    data: { now: c.get("ctx").clock.now(), ...doc, truncated: Boolean(doc.content_truncated) },
  });
}

async function notePage(c: Context<AppEnv>) {
  const ctx = c.get("ctx");
  const id = c.req.param("id") ?? "";
  const [found, names] = await Promise.all([read<{ items: Note[] }>(ctx, "knowledge_search", { ids: [id] }), actorNames(ctx)]);
  const note = found.items[0];
  if (!note) throw new ToolError("not_found", `No note ${id}.`, { hint: "Search or browse the notes on the knowledge page." });
  const project = note.project_id ? (await read<{ items: Array<{ id: string; key: string; title: string }> }>(ctx, "project_query", { project_id: note.project_id })).items[0] : undefined;
  return NotePage({ viewer: await viewerOf(c), data: { now: ctx.clock.now(), note, names, project } });
}

export function registerKnowledge(routes: Hono<AppEnv>): void {
  const back: [string, string] = [KNOWLEDGE_PATH, "Knowledge, skills and documents"];
  routes.get("/knowledge", (c) => toolPage(c, async () => KnowledgePage({ viewer: await viewerOf(c), data: await knowledgeData(c) }), back));
  routes.get("/documents/:id", (c) => toolPage(c, () => documentPage(c), back));
  routes.get("/knowledge/notes/:id", (c) => toolPage(c, () => notePage(c), back));
}
