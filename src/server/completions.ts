/**
 * completion/complete: values for prompt arguments and resource-template variables, from the
 * caller's tenant only. Every source is a prefix match with ASCII case folded (as SQLite's NOCASE
 * and LIKE fold it), answers at most {@link MAX_COMPLETION_VALUES} values and reads at most one
 * more row than that, so a request costs one bounded query however large the tenant.
 *
 * An unknown resource template, or an argument a known prompt does not take, is refused with
 * -32602; an unknown prompt has no values to offer (an empty completion).
 */
import { and, eq, isNull, ne, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { dbOf } from "../db/client";
import { actors, documents, events, projects, repositories, tasks } from "../db/schema";
import { GUIDE_TOPICS } from "../guide/topics";
import type { Ctx } from "../core/context";
import { excerpt } from "../core/errors";
import { InvalidPromptParams, listAllPrompts, findWorkflowPrompt, type CompletionSource } from "./prompts";

/** The spec's cap on values in one completion result. */
export const MAX_COMPLETION_VALUES = 100;
/** Longest value completed: nothing longer can complete to a valid argument (prompt arguments stop at 1000 characters). */
export const MAX_COMPLETION_VALUE_CHARS = 1000;

export type CompletionRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

export interface CompletionContext {
  /** Arguments the client has already filled in, by name. */
  arguments?: Record<string, string>;
}

export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/**
 * The resource templates and where each variable's values come from. The server lists these
 * same templates (src/server/server.ts); a ref/resource must name one of them exactly.
 */
export const RESOURCE_TEMPLATE_COMPLETIONS: Readonly<Record<string, Readonly<Record<string, CompletionSource>>>> = {
  "ledger://guide/{topic}": { topic: "guide_topic" },
  "ledger://project/{key}/brief": { key: "project_key" },
  "ledger://repos/{owner}/{name}/presets": { owner: "repo_owner", name: "repo_name" },
};

/** The document store's built-in prompts (src/docs/prompts/prompts.ts) whose arguments have values to offer. */
const DOCS_PROMPT_COMPLETIONS: Readonly<Record<string, Readonly<Record<string, CompletionSource>>>> = {
  summarize_document: { name: "document_path", hash: "document_hash" },
};

/** A character that sorts after every other: the open end of a prefix range. */
const TOP = "\u{10FFFF}";

/**
 * SQL true when `column` starts with the bound prefix, ASCII case folded. The NOCASE range lets
 * SQLite seek a NOCASE index where there is one and bounds the scan where there is not; the
 * substr test makes the match exact. Not LIKE: D1 refuses LIKE patterns over 50 bytes.
 */
const startsWith = (column: SQLWrapper, prefix: string): SQL =>
  sql`(${column} COLLATE NOCASE >= ${prefix} AND ${column} COLLATE NOCASE < ${`${prefix}${TOP}`} AND substr(${column}, 1, length(${prefix})) = ${prefix} COLLATE NOCASE)`;

/** The column in NOCASE order, as the prefix match compares it (and as NOCASE indexes hold it). */
const nocase = (column: SQLWrapper): SQL => sql`${column} COLLATE NOCASE`;

/** One page of distinct values: reads one row past the cap to know whether there are more. */
async function distinct(query: { limit(n: number): PromiseLike<Array<{ v: unknown }>> }): Promise<Completion> {
  const rows = await query.limit(MAX_COMPLETION_VALUES + 1);
  return page(rows.map((r) => r.v as string));
}

function page(values: string[]): Completion {
  if (values.length > MAX_COMPLETION_VALUES) return { values: values.slice(0, MAX_COMPLETION_VALUES), hasMore: true };
  return { values, total: values.length, hasMore: false };
}

/** Filled-in context argument, trimmed, or undefined (over-long values are ignored rather than queried). */
function given(context: CompletionContext | undefined, name: string): string | undefined {
  const v = context?.arguments?.[name];
  return typeof v === "string" && v.trim() !== "" && v.length <= MAX_COMPLETION_VALUE_CHARS ? v.trim() : undefined;
}

type Completer = (ctx: Ctx, prefix: string, context: CompletionContext | undefined) => Promise<Completion>;

// The open statuses as the tasks room's hand SQL spells them.
const OPEN = sql`${tasks.status} NOT IN ('done', 'cancelled')`;

const SOURCES: Record<CompletionSource, Completer> = {
  project_key: (ctx, prefix) =>
    distinct(
      dbOf(ctx)
        .select({ v: projects.key })
        .from(projects)
        .where(and(eq(projects.tenantId, ctx.tenantId), isNull(projects.deletedAt), startsWith(projects.key, prefix)))
        .orderBy(nocase(projects.key)),
    ),
  open_task: (ctx, prefix) => {
    // A reference is KEY-number: with a dash the key is whole and the number is the prefix;
    // without one the key itself is being typed.
    const dash = /^([A-Za-z][A-Za-z0-9]*)-(\d*)$/.exec(prefix);
    const open = (match: SQL) =>
      dbOf(ctx)
        .select({ v: sql<string>`${projects.key} || '-' || ${tasks.seq}` })
        .from(tasks)
        .innerJoin(projects, and(eq(projects.id, tasks.projectId), eq(projects.tenantId, tasks.tenantId)))
        .where(and(eq(tasks.tenantId, ctx.tenantId), isNull(projects.deletedAt), OPEN, match));
    if (dash) {
      // `COLLATE NOCASE` as the live-key index is declared.
      return distinct(open(sql`${projects.key} = ${dash[1]} COLLATE NOCASE AND ${startsWith(sql`CAST(${tasks.seq} AS TEXT)`, dash[2]!)}`).orderBy(tasks.seq));
    }
    if (prefix !== "" && !/^[A-Za-z][A-Za-z0-9]*$/.test(prefix)) return Promise.resolve(page([]));
    return distinct(open(startsWith(projects.key, prefix)).orderBy(nocase(projects.key), tasks.seq));
  },
  actor: (ctx, prefix) =>
    distinct(
      dbOf(ctx)
        .select({ v: actors.name })
        .from(actors)
        .where(and(eq(actors.tenantId, ctx.tenantId), startsWith(actors.name, prefix)))
        .orderBy(nocase(actors.name)),
    ),
  entity_path: (ctx, prefix) =>
    distinct(
      dbOf(ctx)
        .selectDistinct({ v: events.entityPath })
        .from(events)
        .where(and(eq(events.tenantId, ctx.tenantId), startsWith(events.entityPath, prefix)))
        .orderBy(nocase(events.entityPath)),
    ),
  changeset: (ctx, prefix, context) => {
    // With the entity already chosen, only the changesets that touched it.
    const path = given(context, "entity_path");
    return distinct(
      dbOf(ctx)
        .selectDistinct({ v: events.changesetId })
        .from(events)
        .where(and(eq(events.tenantId, ctx.tenantId), ne(events.changesetId, ""), path ? eq(events.entityPath, path) : undefined, startsWith(events.changesetId, prefix)))
        .orderBy(nocase(events.changesetId)),
    );
  },
  guide_topic: (_ctx, prefix) => {
    const p = prefix.toLowerCase();
    return Promise.resolve(page(GUIDE_TOPICS.map((t) => t.id).filter((id) => id.startsWith(p))));
  },
  repo_owner: (ctx, prefix) =>
    distinct(
      dbOf(ctx)
        .selectDistinct({ v: repositories.owner })
        .from(repositories)
        .where(and(eq(repositories.tenantId, ctx.tenantId), startsWith(repositories.owner, prefix)))
        .orderBy(nocase(repositories.owner)),
    ),
  repo_name: (ctx, prefix, context) => {
    const owner = given(context, "owner");
    return distinct(
      dbOf(ctx)
        .selectDistinct({ v: repositories.name })
        .from(repositories)
        .where(and(eq(repositories.tenantId, ctx.tenantId), owner ? sql`${repositories.owner} = ${owner} COLLATE NOCASE` : undefined, startsWith(repositories.name, prefix)))
        .orderBy(nocase(repositories.name)),
    );
  },
  document_path: (ctx, prefix) =>
    distinct(
      dbOf(ctx)
        .select({ v: documents.path })
        .from(documents)
        .where(and(eq(documents.tenantId, ctx.tenantId), isNull(documents.deletedAt), startsWith(documents.path, prefix)))
        .orderBy(nocase(documents.path)),
    ),
  document_hash: (ctx, prefix) =>
    distinct(
      dbOf(ctx)
        .selectDistinct({ v: documents.hash })
        .from(documents)
        .where(and(eq(documents.tenantId, ctx.tenantId), isNull(documents.deletedAt), startsWith(documents.hash, prefix)))
        .orderBy(documents.hash),
    ),
};

/** The source for a prompt's argument; null when the argument exists but takes free text. */
async function promptSource(ctx: Ctx, name: string, argument: string): Promise<CompletionSource | null> {
  const workflow = findWorkflowPrompt(name);
  const listed = workflow ? undefined : (await listAllPrompts(ctx)).find((p) => p.name === name);
  const args = workflow ? workflow.arguments : listed ? (listed.arguments ?? []) : undefined;
  // No values rather than an error: document prompts come and go, so a client may well ask about
  // one listed a moment ago (and the conformance suite asks about its own reference prompt).
  if (!args) return null;
  const arg = args.find((a) => a.name === argument);
  if (!arg) {
    throw new InvalidPromptParams(
      args.length === 0
        ? `Prompt '${excerpt(name, 80)}' takes no arguments.`
        : `Prompt '${excerpt(name, 80)}' has no argument '${excerpt(argument, 40)}'; it takes ${args.map((a) => a.name).join(", ")}.`,
    );
  }
  if (workflow) return workflow.arguments.find((a) => a.name === argument)!.completion ?? null;
  return DOCS_PROMPT_COMPLETIONS[name]?.[argument] ?? null;
}

function templateSource(uri: string, variable: string): CompletionSource {
  const vars = RESOURCE_TEMPLATE_COMPLETIONS[uri];
  if (!vars) {
    throw new InvalidPromptParams(
      `Unknown resource template '${excerpt(uri, 120)}'. Call resources/templates/list; the ref's uri is a template exactly as listed (${Object.keys(RESOURCE_TEMPLATE_COMPLETIONS).join(", ")}).`,
    );
  }
  const source = vars[variable];
  if (!source) throw new InvalidPromptParams(`Resource template '${uri}' has no variable '${excerpt(variable, 40)}'; it has ${Object.keys(vars).join(", ")}.`);
  return source;
}

/**
 * completion/complete. `ref`, `argumentName`, `value` and `context` are the request's params
 * (`argument.name`, `argument.value`); the result is what goes under `completion`.
 * Throws {@link InvalidPromptParams} (-32602) for an unknown ref or argument and an over-long value.
 */
export async function complete(ctx: Ctx, ref: CompletionRef, argumentName: string, value: string, context?: CompletionContext): Promise<Completion> {
  if (typeof value !== "string") throw new InvalidPromptParams("argument.value must be a string.");
  if (value.length > MAX_COMPLETION_VALUE_CHARS) {
    throw new InvalidPromptParams(`argument.value is ${value.length} characters; completion takes at most ${MAX_COMPLETION_VALUE_CHARS}.`);
  }
  let source: CompletionSource | null;
  if (ref.type === "ref/prompt") source = await promptSource(ctx, ref.name, argumentName);
  else if (ref.type === "ref/resource") source = templateSource(ref.uri, argumentName);
  else throw new InvalidPromptParams(`Unknown ref type '${excerpt(String((ref as { type?: unknown }).type), 40)}'; use ref/prompt or ref/resource.`);
  if (source === null) return page([]);
  return SOURCES[source](ctx, value.trim(), context);
}
