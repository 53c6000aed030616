/**
 * The hook settings files the planners edit, all JSON: parsed, edited and written back with a
 * two-space indent, every key the user had kept. Two layouts exist among the clients:
 * - grouped (Claude Code, Codex, Gemini CLI): `hooks.<Event>` is a list of matcher groups
 *   `{ matcher?, hooks: [handler, …] }`;
 * - flat (Cursor): `hooks.<event>` is a list of handlers, each with its own optional `matcher`.
 * Our handlers are recognised by what only we write: a URL to the server's `/mcp/hooks/`, or a
 * command running `agent-ledger hook`. Nothing else in the file is touched.
 */
export type Json = Record<string, unknown>;
export type Layout = "grouped" | "flat";

/** One handler we install, under its event and (for tool events) its matcher. */
export interface HookEntry {
  event: string;
  matcher?: string;
  handler: Json;
}

/** A settings file the planner cannot edit safely (not JSON, not an object): the person edits it by hand. */
export class HookSettingsError extends Error {
  override name = "HookSettingsError";
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** True for a handler this command line wrote. */
export function isOurs(handler: unknown): boolean {
  if (!isObject(handler)) return false;
  return (typeof handler.url === "string" && handler.url.includes("/mcp/hooks/")) || (typeof handler.command === "string" && handler.command.includes("agent-ledger hook"));
}

/** The file's content as an object: an absent or blank file is empty. */
export function parseSettings(path: string, text: string | null): Json {
  if (text === null || text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HookSettingsError(`${path} is not plain JSON (${err instanceof Error ? err.message : String(err)}); fix it or add the hooks by hand (docs/hooks.md).`);
  }
  if (!isObject(parsed)) throw new HookSettingsError(`${path} does not hold a JSON object; add the hooks by hand (docs/hooks.md).`);
  if (parsed.hooks !== undefined && !isObject(parsed.hooks)) throw new HookSettingsError(`${path} has a "hooks" that is not an object; fix it by hand (docs/hooks.md).`);
  return parsed;
}

export const serialise = (doc: Json): string => `${JSON.stringify(doc, null, 2)}\n`;

/** Our handlers in the file, in file order, as entries (to compare with what an install would write). */
export function oursIn(doc: Json, layout: Layout): HookEntry[] {
  const out: HookEntry[] = [];
  for (const [event, list] of Object.entries(isObject(doc.hooks) ? doc.hooks : {})) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (layout === "flat") {
        if (!isOurs(item)) continue;
        const { matcher, ...handler } = item as Json;
        out.push({ event, ...(typeof matcher === "string" ? { matcher } : {}), handler });
        continue;
      }
      if (!isObject(item) || !Array.isArray(item.hooks)) continue;
      for (const handler of item.hooks) if (isOurs(handler)) out.push({ event, ...(typeof item.matcher === "string" ? { matcher: item.matcher } : {}), handler: handler as Json });
    }
  }
  return out;
}

/**
 * The document without our handlers: a group left with none of its handlers goes, an event left
 * with no groups goes, and `hooks` left empty goes; what we never touched stays as it was.
 */
export function withoutOurs(doc: Json, layout: Layout): { doc: Json; removed: boolean } {
  if (!isObject(doc.hooks)) return { doc, removed: false };
  let removed = false;
  const hooks: Json = {};
  for (const [event, list] of Object.entries(doc.hooks)) {
    if (!Array.isArray(list)) {
      hooks[event] = list;
      continue;
    }
    const kept: unknown[] = [];
    let touched = false;
    for (const item of list) {
      if (layout === "flat") {
        if (isOurs(item)) touched = true;
        else kept.push(item);
        continue;
      }
      if (!isObject(item) || !Array.isArray(item.hooks) || !item.hooks.some(isOurs)) {
        kept.push(item);
        continue;
      }
      touched = true;
      const theirs = item.hooks.filter((h) => !isOurs(h));
      if (theirs.length > 0) kept.push({ ...item, hooks: theirs });
    }
    removed ||= touched;
    if (!touched || kept.length > 0) hooks[event] = touched ? kept : list;
  }
  if (!removed) return { doc, removed };
  const rest: Json = { ...doc, hooks };
  if (Object.keys(hooks).length === 0) delete rest.hooks;
  return { doc: rest, removed };
}

/** The document with our entries appended (one group per event and matcher in the grouped layout). */
export function withOurs(doc: Json, entries: readonly HookEntry[], layout: Layout): Json {
  const hooks: Json = { ...(isObject(doc.hooks) ? doc.hooks : {}) };
  for (const e of entries) {
    const list = Array.isArray(hooks[e.event]) ? [...(hooks[e.event] as unknown[])] : [];
    if (layout === "flat") list.push({ ...e.handler, ...(e.matcher !== undefined ? { matcher: e.matcher } : {}) });
    else {
      const last = list[list.length - 1];
      // Handlers of one install for the same event and matcher share a group.
      if (isObject(last) && Array.isArray(last.hooks) && last.hooks.every(isOurs) && last.matcher === e.matcher) list[list.length - 1] = { ...last, hooks: [...last.hooks, e.handler] };
      else list.push({ ...(e.matcher !== undefined ? { matcher: e.matcher } : {}), hooks: [e.handler] });
    }
    hooks[e.event] = list;
  }
  return { ...doc, hooks };
}
