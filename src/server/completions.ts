/**
 * completion/complete: values for prompt arguments and resource-template variables, from the
 * caller's tenant only. Every source is a prefix match with ASCII case folded (as SQLite's NOCASE
 * and LIKE fold it), answers at most {@link MAX_COMPLETION_VALUES} values and reads at most one
 * more row than that, so a request costs one bounded query however large the tenant.
 *
 * An unknown resource template, or an argument a known prompt does not take, is refused with
 * -32602; an unknown prompt has no values to offer (an empty completion).
 */
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
function startsWith(column: string, prefix: string): { sql: string; params: string[] } {
  return {
    sql: `(${column} COLLATE NOCASE >= ? AND ${column} COLLATE NOCASE < ? AND substr(${column}, 1, length(?)) = ? COLLATE NOCASE)`,
    params: [prefix, `${prefix}${TOP}`, prefix, prefix],
  };
}

/** One page of distinct values: reads one row past the cap to know whether there are more. */
async function distinct(ctx: Ctx, sql: string, params: unknown[]): Promise<Completion> {
  const rows = await ctx.d1
    .prepare(`${sql} LIMIT ${MAX_COMPLETION_VALUES + 1}`)
    .bind(...params)
    .all<{ v: string }>();
  return page(rows.results.map((r) => r.v));
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

const OPEN = "t.status NOT IN ('done', 'cancelled')";

const SOURCES: Record<CompletionSource, Completer> = {
  project_key: (ctx, prefix) => {
    const m = startsWith("key", prefix);
    return distinct(ctx, `SELECT key AS v FROM projects WHERE tenant_id = ? AND deleted_at IS NULL AND ${m.sql} ORDER BY key COLLATE NOCASE`, [ctx.tenantId, ...m.params]);
  },
  open_task: (ctx, prefix) => {
    // A reference is KEY-number: with a dash the key is whole and the number is the prefix;
    // without one the key itself is being typed.
    const dash = /^([A-Za-z][A-Za-z0-9]*)-(\d*)$/.exec(prefix);
    const select = `SELECT p.key || '-' || t.seq AS v FROM tasks t JOIN projects p ON p.id = t.project_id AND p.tenant_id = t.tenant_id
      WHERE t.tenant_id = ? AND p.deleted_at IS NULL AND ${OPEN}`;
    if (dash) {
      const seq = startsWith("CAST(t.seq AS TEXT)", dash[2]!);
      return distinct(ctx, `${select} AND p.key = ? COLLATE NOCASE AND ${seq.sql} ORDER BY t.seq`, [ctx.tenantId, dash[1], ...seq.params]);
    }
    if (prefix !== "" && !/^[A-Za-z][A-Za-z0-9]*$/.test(prefix)) return Promise.resolve(page([]));
    const key = startsWith("p.key", prefix);
    return distinct(ctx, `${select} AND ${key.sql} ORDER BY p.key COLLATE NOCASE, t.seq`, [ctx.tenantId, ...key.params]);
  },
  actor: (ctx, prefix) => {
    const m = startsWith("name", prefix);
    return distinct(ctx, `SELECT name AS v FROM actors WHERE tenant_id = ? AND ${m.sql} ORDER BY name COLLATE NOCASE`, [ctx.tenantId, ...m.params]);
  },
  entity_path: (ctx, prefix) => {
    const m = startsWith("entity_path", prefix);
    return distinct(ctx, `SELECT DISTINCT entity_path AS v FROM events WHERE tenant_id = ? AND ${m.sql} ORDER BY entity_path COLLATE NOCASE`, [ctx.tenantId, ...m.params]);
  },
  changeset: (ctx, prefix, context) => {
    // With the entity already chosen, only the changesets that touched it.
    const path = given(context, "entity_path");
    const m = startsWith("changeset_id", prefix);
    return distinct(
      ctx,
      `SELECT DISTINCT changeset_id AS v FROM events WHERE tenant_id = ? AND changeset_id <> '' ${path ? "AND entity_path = ?" : ""} AND ${m.sql} ORDER BY changeset_id COLLATE NOCASE`,
      [ctx.tenantId, ...(path ? [path] : []), ...m.params],
    );
  },
  guide_topic: (_ctx, prefix) => {
    const p = prefix.toLowerCase();
    return Promise.resolve(page(GUIDE_TOPICS.map((t) => t.id).filter((id) => id.startsWith(p))));
  },
  repo_owner: (ctx, prefix) => {
    const m = startsWith("owner", prefix);
    return distinct(ctx, `SELECT DISTINCT owner AS v FROM repositories WHERE tenant_id = ? AND ${m.sql} ORDER BY owner COLLATE NOCASE`, [ctx.tenantId, ...m.params]);
  },
  repo_name: (ctx, prefix, context) => {
    const owner = given(context, "owner");
    const m = startsWith("name", prefix);
    return distinct(ctx, `SELECT DISTINCT name AS v FROM repositories WHERE tenant_id = ? ${owner ? "AND owner = ? COLLATE NOCASE" : ""} AND ${m.sql} ORDER BY name COLLATE NOCASE`, [
      ctx.tenantId,
      ...(owner ? [owner] : []),
      ...m.params,
    ]);
  },
  document_path: (ctx, prefix) => {
    const m = startsWith("path", prefix);
    return distinct(ctx, `SELECT path AS v FROM documents WHERE tenant_id = ? AND deleted_at IS NULL AND ${m.sql} ORDER BY path COLLATE NOCASE`, [ctx.tenantId, ...m.params]);
  },
  document_hash: (ctx, prefix) => {
    const m = startsWith("hash", prefix);
    return distinct(ctx, `SELECT DISTINCT hash AS v FROM documents WHERE tenant_id = ? AND deleted_at IS NULL AND ${m.sql} ORDER BY hash`, [ctx.tenantId, ...m.params]);
  },
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
