/**
 * MCP prompts (seed 003 "Prompt Templates"): a few built-in prompts written for the docs tools,
 * and the caller's tenant's own prompt documents: every live document whose file name, in any
 * folder, is `PROMPT-<stem>.md`. Its prompt name is the stem with dashes turned to underscores
 * (`notes/PROMPT-research-mcp.md` → `research_mcp`), and prompts/get returns the whole markdown
 * as one assistant message.
 *
 * Name clashes are settled the same way every time:
 * - two prompt documents with the same derived name: the one nearest the store's root (fewest
 *   folders) wins, then the smaller path in byte order; the others are not listed;
 * - a prompt document named like a built-in replaces the built-in, so a team can reword one.
 */
import type { GetPromptResult, Prompt } from "@modelcontextprotocol/server";
import { ProtocolError as McpError, ProtocolErrorCode as ErrorCode } from "@modelcontextprotocol/server";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../core/context";
import { dbOf } from "../../db/client";
import { docTexts, documents } from "../../db/schema";
import { excerpt, ToolError } from "../../core/errors";
import { clip } from "../../core/text";
import { getDocument } from "../store/store";

/** A prompt document larger than this is refused by prompts/get rather than sent to a model. */
export const MAX_PROMPT_DOCUMENT_BYTES = 256 * 1024;
/** Prompt documents looked at per listing (in path order), and prompts listed from them. */
export const MAX_PROMPT_DOCUMENTS = 500;
export const MAX_FILE_PROMPTS = 200;
/** Longest argument value a built-in prompt takes. */
export const MAX_PROMPT_ARGUMENT_CHARS = 1000;
const MAX_DESCRIPTION_CHARS = 200;
/** How much of a prompt document's indexed text is read to find its title. */
const HEAD_CHARS = 600;

const PROMPT_FILE = /^PROMPT-(.+)\.md$/;

/** The prompt name a file name gives, or null when it is not a prompt document's name. */
export function promptNameOf(fileName: string): string | null {
  const m = PROMPT_FILE.exec(fileName);
  return m ? m[1]!.replace(/-/g, "_") : null;
}

interface BuiltinArgument {
  name: string;
  description: string;
  required?: boolean;
}

interface Builtin {
  name: string;
  description: string;
  arguments: BuiltinArgument[];
  render(args: Record<string, string>): string;
}

const json = (v: unknown) => JSON.stringify(v);

const BUILTINS: Builtin[] = [
  {
    name: "search_codebase",
    description: "Search the document store for a code pattern, and report where it occurs",
    arguments: [
      { name: "pattern", description: "A regular expression or literal text to look for", required: true },
      { name: "file_type", description: "Only documents with this extension, e.g. ts or .py" },
    ],
    render(a) {
      const ext = a.file_type ? (a.file_type.startsWith(".") ? a.file_type : `.${a.file_type}`) : null;
      const grep = { op: "grep", params: { pattern: a.pattern, line_numbers: true, context: 2 } };
      const steps = ext ? [{ op: "list", params: { extension: ext, paths_only: true } }, grep] : [grep];
      return [
        `Find where ${json(a.pattern)} occurs in the document store${ext ? ` in ${ext} documents` : ""}.`,
        "",
        `1. Run docs_query with ${json({ steps })}.`,
        `2. If grep finds nothing, try a keyword search: docs_query ${json({ steps: [{ op: "search", params: { query: a.pattern, type: "keyword", limit: 10 } }] })}.`,
        '3. For the most relevant matches, read the surrounding document with a get step ({"op": "get", "params": {"hash": …}}).',
        "",
        "Report each match as path:line with a one-line explanation, grouped by document, most relevant first. Say plainly if nothing matched.",
      ].join("\n");
    },
  },
  {
    name: "summarize_document",
    description: "Summarize one stored document, found by content hash or by name",
    arguments: [
      { name: "hash", description: "The document's content hash (full, or 8+ characters as search returns it)" },
      { name: "name", description: "The document's path or name, when no hash is given" },
      { name: "max_words", description: "Longest summary to write, in words (default 200)" },
    ],
    render(a) {
      const hash = a.hash?.trim();
      const name = a.name?.trim();
      if (!hash && !name) throw promptArgsError("summarize_document needs the argument 'hash' or 'name' (the document to summarize).");
      const words = a.max_words?.trim() || "200";
      if (!/^\d{1,5}$/.test(words) || Number(words) < 1) throw promptArgsError(`max_words must be a whole number of words (got '${excerpt(words, 20)}').`);
      const get = hash
        ? hash.length === 64
          ? { steps: [{ op: "get", params: { hash, include_content: true } }] }
          : {
              steps: [
                { op: "search", params: { hash, limit: 1 } },
                { op: "get", params: { hash: "$prev.results[0].hash", include_content: true } },
              ],
            }
        : { steps: [{ op: "get", params: { name, include_content: true } }] };
      return [
        `Summarize the stored document ${hash ? `with hash ${json(hash)}` : json(name)}.`,
        "",
        `1. Fetch it with docs_query ${json(get)}.`,
        "2. If it is not found, search for it (a search step with its name as the query) and fetch the best match.",
        `3. Write a summary of at most ${words} words: what the document is for, its key points, and any decisions or open questions it records.`,
        "",
        "Name the document's path and hash at the top. Quote only what the summary needs.",
      ].join("\n");
    },
  },
  {
    name: "research_docs",
    description: "Research a topic across the document store in a session, and write up what it says",
    arguments: [{ name: "topic", description: "The question or topic to research", required: true }],
    render(a) {
      return [
        `Research ${json(a.topic)} using the team's document store.`,
        "",
        `1. Start a session for the work: docs_session ${json({ action: "start", params: { name: "research", description: (a.topic ?? "").slice(0, 200) } })}.`,
        `2. Search broadly: docs_query ${json({ steps: [{ op: "search", params: { query: a.topic, limit: 10 } }] })}; rephrase and search again if the results are thin.`,
        '3. Read the promising results in full (a get step with "include_content": true) and pin the ones that matter: docs_session {"action": "pin", "params": {"hash": …}}. Later searches then keep to them.',
        "4. Check specific names, numbers and claims with grep steps before relying on them.",
        "5. Write up: the answer, the evidence with each document's path, contradictions between documents, and what the store does not say.",
        '6. Stop the session: docs_session {"action": "stop", "params": {"clear": false}} keeps the pins for a later "start" with the same name.',
      ].join("\n");
    },
  },
];

function promptArgsError(message: string): McpError {
  return new McpError(ErrorCode.InvalidParams, message);
}

interface FilePrompt {
  name: string;
  path: string;
  size: number;
  description: string;
}

interface PromptDocRow {
  path: string;
  name: string;
  size: number;
  metadata: string;
  head: string | null;
}

function firstHeading(text: string | null): string | null {
  if (!text) return null;
  const m = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(text);
  return m ? m[1]!.trim() : null;
}

function metadataDescription(metadata: string): string | null {
  try {
    const m = JSON.parse(metadata) as Record<string, unknown>;
    return typeof m.description === "string" && m.description.trim() !== "" ? m.description.trim() : null;
  } catch {
    return null;
  }
}

/**
 * The caller's prompt documents, one per derived name (see the clash rule above), by name.
 * A description comes from the document's metadata `description`, else its first markdown
 * heading once its text is indexed, else its file name.
 */
async function filePrompts(ctx: Ctx): Promise<FilePrompt[]> {
  const d = alias(documents, "d");
  const t = alias(docTexts, "t");
  const rows: PromptDocRow[] = await dbOf(ctx)
    .select({ path: d.path, name: d.name, size: d.size, metadata: d.metadata, head: sql<string | null>`substr(${t.text}, 1, ${HEAD_CHARS})`.as("head") })
    .from(d)
    .leftJoin(t, and(eq(t.tenantId, d.tenantId), eq(t.hash, d.hash), eq(t.status, "text")))
    // Hand SQL inside: drizzle has no GLOB operator.
    .where(and(eq(d.tenantId, ctx.tenantId), isNull(d.deletedAt), sql`${d.name} GLOB 'PROMPT-?*.md'`))
    .orderBy(asc(d.path))
    .limit(MAX_PROMPT_DOCUMENTS)
    .all();
  const depth = (p: string) => p.split("/").length;
  const ordered = rows.sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const byName = new Map<string, FilePrompt>();
  for (const r of ordered) {
    const name = promptNameOf(r.name);
    if (name === null || byName.has(name)) continue;
    const stem = r.name.slice("PROMPT-".length, -".md".length).replace(/[-_]+/g, " ");
    const title = metadataDescription(r.metadata) ?? firstHeading(r.head) ?? stem;
    byName.set(name, { name, path: r.path, size: r.size, description: `${clip(title.replace(/\s+/g, " "), MAX_DESCRIPTION_CHARS)} (from ${r.path})` });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, MAX_FILE_PROMPTS);
}

/** prompts/list: the built-ins a prompt document does not replace, then the prompt documents. */
export async function listPrompts(ctx: Ctx): Promise<Prompt[]> {
  const files = await filePrompts(ctx);
  const taken = new Set(files.map((f) => f.name));
  return [
    ...BUILTINS.filter((b) => !taken.has(b.name)).map((b) => ({
      name: b.name,
      description: b.description,
      arguments: b.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required === true })),
    })),
    ...files.map((f) => ({ name: f.name, description: f.description })),
  ];
}

/**
 * prompts/get. Throws McpError: InvalidParams for an unknown name or bad arguments, and for a
 * prompt document that is too large or not UTF-8 text (the caller can fix the document).
 */
export async function getPrompt(ctx: Ctx, name: string, args: Record<string, string> = {}): Promise<GetPromptResult> {
  const file = (await filePrompts(ctx)).find((f) => f.name === name);
  if (file) {
    if (Object.keys(args).length > 0) {
      throw promptArgsError(
        `Prompt '${excerpt(name, 80)}' comes from ${file.path} and takes no arguments (got ${Object.keys(args)
          .map((k) => excerpt(k, 40))
          .join(", ")}).`,
      );
    }
    if (file.size > MAX_PROMPT_DOCUMENT_BYTES) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Prompt '${excerpt(name, 80)}' comes from ${file.path}, which is ${file.size} bytes; prompts are at most ${MAX_PROMPT_DOCUMENT_BYTES} bytes (256 KiB). Shorten the document or split it into several PROMPT-*.md documents.`,
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = (await getDocument(ctx, { path: file.path })).bytes;
    } catch (err) {
      // Deleted or replaced between the listing and the read.
      if (err instanceof ToolError) throw new McpError(ErrorCode.InvalidParams, `Prompt '${excerpt(name, 80)}' could not be read: ${err.message}. ${err.hint}`);
      throw err;
    }
    if (bytes.byteLength > MAX_PROMPT_DOCUMENT_BYTES) {
      throw new McpError(ErrorCode.InvalidParams, `Prompt '${excerpt(name, 80)}' (${file.path}) is larger than ${MAX_PROMPT_DOCUMENT_BYTES} bytes; shorten it.`);
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new McpError(ErrorCode.InvalidParams, `Prompt '${excerpt(name, 80)}' (${file.path}) is not UTF-8 text; store the prompt as UTF-8 markdown.`);
    }
    return { description: file.description, messages: [{ role: "assistant", content: { type: "text", text } }] };
  }

  const builtin = BUILTINS.find((b) => b.name === name);
  if (!builtin) {
    throw new McpError(ErrorCode.InvalidParams, `Unknown prompt '${excerpt(name, 80)}'. Call prompts/list for the available prompts; a document named PROMPT-<name>.md in the store becomes a prompt.`);
  }
  const known = new Set(builtin.arguments.map((a) => a.name));
  const unknown = Object.keys(args).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    throw promptArgsError(`Prompt '${name}' has no argument ${unknown.map((k) => `'${excerpt(k, 40)}'`).join(", ")}; it takes ${builtin.arguments.map((a) => a.name).join(", ")}.`);
  }
  for (const a of builtin.arguments) {
    const v = args[a.name];
    if (a.required && (v === undefined || v.trim() === "")) throw promptArgsError(`Prompt '${name}' needs the argument '${a.name}': ${a.description}.`);
    if (v !== undefined && v.length > MAX_PROMPT_ARGUMENT_CHARS) {
      throw promptArgsError(`Argument '${a.name}' of prompt '${name}' is ${v.length} characters; the limit is ${MAX_PROMPT_ARGUMENT_CHARS}.`);
    }
  }
  return { description: builtin.description, messages: [{ role: "user", content: { type: "text", text: builtin.render(args) } }] };
}
