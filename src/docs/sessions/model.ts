/**
 * Document-store sessions (seed 003 `docs_session`): named scopes an actor works in. A session
 * holds pins, globs over document paths or content hashes; while it is current, `list` and
 * `search` keep to the documents its pins cover (currentScope).
 *
 * Rules this server keeps (the seed leaves them open):
 * - Sessions belong to one actor of one tenant; nobody else sees them (another actor's session
 *   name is simply not found).
 * - `start` makes the named session current. A name that exists resumes that session with its
 *   pins; the session that was current stays, not current, until stopped.
 * - `stop` ends the current session (or the one named). With clear (the default) the session
 *   and its pins are forgotten; with clear false they are kept and `start` resumes them.
 *   After stopping the current session none is current: nothing falls back silently.
 * - `pin` and `unpin` act on the current session; without one they refuse with
 *   `no_active_session`.
 * - `warm` is recorded and reported. YAMS uses it to preload a session's documents into its
 *   daemon's cache; this server has no per-process cache (any isolate may serve any call), so
 *   it changes nothing else here.
 */
import { globMatcher } from "../../core/glob";
import { excerpt, invalidInput, notFound, ToolError } from "../../core/errors";
import { firstControl } from "../../core/bounds";
import type { Ctx } from "../../core/context";
import { and, asc, eq, gt, gte, isNull, lt } from "drizzle-orm";
import { dbOf } from "../../db/client";
// `documents` here names the matches a session answers, so the table goes by `docs`.
import { documents as docs } from "../../db/schema";
import { iso } from "../../core/time";
import type { CurrentSession, PinEntry, SessionView } from "../../durable/doc-sessions";
import type { DocScope } from "../shared";
import { MAX_PATH_CHARS } from "../store/store";

export const MAX_SESSIONS_PER_ACTOR = 20;
export const MAX_PINS_PER_SESSION = 100;
export const MAX_SESSION_NAME_CHARS = 64;
export const MAX_SESSION_DESCRIPTION_CHARS = 500;
export const MIN_HASH_PREFIX = 8;
/** Documents a pin or unpin answer lists; `matched` still counts them all. */
export const MAX_LISTED_MATCHES = 100;
/** Live documents one glob is tested against; past this the answer says the count is partial. */
export const MAX_GLOB_SCAN = 20_000;
/** A hash prefix matching more distinct contents than this is too short to pin by. */
const MAX_HASH_PREFIX_MATCHES = 20;
const SCAN_PAGE = 500;

/** Letters, digits and `_ . : @ / -` (spaces inside): readable in listings, safe in any message. */
export const SESSION_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_ .:@/-]*$/;

export const docSessionStub = (ctx: Pick<Ctx, "env" | "tenantId" | "actorId">) => ctx.env.DOC_SESSIONS.get(ctx.env.DOC_SESSIONS.idFromName(`${ctx.tenantId}/${ctx.actorId}`));

const noActiveSession = (action: string) =>
  new ToolError("no_active_session", `There is no current docs session to ${action}.`, {
    hint: `Start one first: docs_session {"action": "start", "params": {"name": "my-task"}}, then ${action} again.`,
  });

function checkSessionName(name: string): string {
  const n = name.trim();
  if (n === "" || n.length > MAX_SESSION_NAME_CHARS || !SESSION_NAME_RE.test(n)) {
    throw invalidInput(
      `session name '${excerpt(name, 80)}' is not a valid name`,
      `Use 1-${MAX_SESSION_NAME_CHARS} characters: letters, digits, spaces and _ . : @ / -, starting with a letter, digit or _.`,
    );
  }
  return n;
}

/**
 * The canonical form of a pin glob, matching how document paths are stored (no leading `/` or
 * `./`, forward slashes), so `/notes/*.md` pins what `notes/*.md` would.
 */
export function normalizePinGlob(raw: string): string {
  if (firstControl(raw, true) >= 0) throw invalidInput(`path '${excerpt(raw)}' contains a control character`, "Remove control characters from the glob.");
  let g = raw.trim().replace(/\\/g, "/");
  while (g.startsWith("./") || g.startsWith("/")) g = g.startsWith("./") ? g.slice(2) : g.slice(1);
  if (g === "") throw invalidInput("path is empty", "Pass a glob over document paths, e.g. 'notes/**/*.md', or a single path.");
  if (g.length > MAX_PATH_CHARS) throw invalidInput(`path is longer than ${MAX_PATH_CHARS} characters`, "Use a shorter glob.");
  return g;
}

/** The text before a glob's first special character: every path it can match starts with it. */
function literalPrefix(glob: string): string {
  const at = glob.search(/[*?[\]{}()!+@\\]/);
  return at < 0 ? glob : glob.slice(0, at);
}

/** A hash reference to pin or unpin: a full SHA-256 hex digest or a prefix of at least 8. */
function checkHashRef(raw: string): string {
  const h = raw.trim().toLowerCase();
  if (!/^[0-9a-f]+$/.test(h) || h.length < MIN_HASH_PREFIX || h.length > 64) {
    throw invalidInput(
      `hash '${excerpt(raw, 80)}' is not a content hash or a prefix of at least ${MIN_HASH_PREFIX} hex characters`,
      "Pass the hash an add or a search returned (64 hex characters), or its first 8 or more.",
    );
  }
  return h;
}

export interface MatchedDocument {
  path: string;
  hash: string;
}

interface Matches {
  documents: MatchedDocument[];
  matched: number;
  /** True when MAX_GLOB_SCAN documents were tested and more remained: `matched` is a lower bound. */
  scan_truncated: boolean;
}

/** Live documents of the caller's tenant whose path matches the glob, as list, search and grep match it (src/core/glob.ts). */
async function matchGlob(ctx: Ctx, glob: string): Promise<Matches> {
  const isMatch = globMatcher([glob]);
  const prefix = literalPrefix(glob);
  // Every path the glob can match sorts between the prefix and the prefix followed by the
  // highest code point, so the scan reads only that range of the live-path index.
  const upper = `${prefix}\u{10FFFF}`;
  const documents: MatchedDocument[] = [];
  let matched = 0;
  let scanned = 0;
  let after = "";
  for (;;) {
    const rows = await dbOf(ctx)
      .select({ path: docs.path, hash: docs.hash })
      .from(docs)
      .where(and(eq(docs.tenantId, ctx.tenantId), isNull(docs.deletedAt), gte(docs.path, prefix), lt(docs.path, upper), gt(docs.path, after)))
      .orderBy(asc(docs.path))
      .limit(SCAN_PAGE)
      .all();
    for (const r of rows) {
      if (isMatch(r.path)) {
        matched++;
        if (documents.length < MAX_LISTED_MATCHES) documents.push(r);
      }
    }
    scanned += rows.length;
    if (rows.length < SCAN_PAGE) return { documents, matched, scan_truncated: false };
    if (scanned >= MAX_GLOB_SCAN) return { documents, matched, scan_truncated: true };
    after = rows[rows.length - 1]!.path;
  }
}

/** Live documents whose content hash starts with `prefix`, and the distinct hashes among them. */
async function matchHash(ctx: Ctx, prefix: string): Promise<{ documents: MatchedDocument[]; matched: number; hashes: string[] }> {
  // Hashes are lowercase hex, so every hash starting with the prefix sorts below prefix + 'g'.
  const rows = await dbOf(ctx)
    .select({ path: docs.path, hash: docs.hash })
    .from(docs)
    .where(and(eq(docs.tenantId, ctx.tenantId), isNull(docs.deletedAt), gte(docs.hash, prefix), lt(docs.hash, `${prefix}g`)))
    .orderBy(asc(docs.hash), asc(docs.path))
    .limit(1000)
    .all();
  const hashes = [...new Set(rows.map((r) => r.hash))];
  return { documents: rows.slice(0, MAX_LISTED_MATCHES), matched: rows.length, hashes };
}

export interface StartInput {
  name: string;
  description?: string | undefined;
  warm: boolean;
}

export async function startSession(ctx: Ctx, input: StartInput): Promise<Record<string, unknown>> {
  const name = checkSessionName(input.name);
  const out = await docSessionStub(ctx).start({
    name,
    description: input.description ?? null,
    warm: input.warm,
    now: iso(ctx.clock.now()),
    maxSessions: MAX_SESSIONS_PER_ACTOR,
  });
  if (!out.ok) {
    throw new ToolError("too_many_sessions", `You already have ${out.names.length} docs sessions, the most one actor may keep.`, {
      hint: `Stop one for good with docs_session {"action": "stop", "params": {"name": "…", "clear": true}}, or resume one by starting it by name. Yours: ${out.names.slice(0, 20).join(", ")}.`,
    });
  }
  return {
    session: out.session,
    current: out.session.name,
    resumed: out.resumed,
    previous: out.previous,
    sessions: out.sessions,
    note: out.resumed ? `Resumed session '${name}' with its ${out.session.pins} pin(s).` : `Started session '${name}'. Pin documents to it; list and search then keep to them.`,
  };
}

export async function stopSession(ctx: Ctx, input: { name?: string | undefined; clear: boolean }): Promise<Record<string, unknown>> {
  const name = input.name === undefined ? null : checkSessionName(input.name);
  const out = await docSessionStub(ctx).stop({ name, clear: input.clear });
  if (!out.ok) {
    if (out.reason === "no_active_session") {
      throw new ToolError("no_active_session", "There is no current docs session to stop.", {
        hint: "Name the session to stop with params.name, or start one first.",
      });
    }
    throw notFound("docs session", name ?? "", "Session names are your own; start it first, or check the name a start returned.");
  }
  return {
    session: out.name,
    stopped: true,
    cleared: out.cleared,
    pins_dropped: out.pins_dropped,
    pins_kept: out.pins_kept,
    was_current: out.was_current,
    current: out.was_current ? null : ((await docSessionStub(ctx).current())?.name ?? null),
  };
}

export type PinRef = { path: string; hash?: undefined } | { hash: string; path?: undefined };

function checkRef(input: { path?: string | undefined; hash?: string | undefined }): PinRef {
  if ((input.path === undefined) === (input.hash === undefined)) {
    throw invalidInput("pass exactly one of 'path' or 'hash'", "Pin by a glob over document paths (path: 'notes/**/*.md') or by a content hash (hash: the full hash or its first 8+ characters).");
  }
  return input.path !== undefined ? { path: input.path } : { hash: input.hash! };
}

export async function pinToSession(ctx: Ctx, input: { path?: string | undefined; hash?: string | undefined }): Promise<Record<string, unknown>> {
  const ref = checkRef(input);
  const glob = ref.path !== undefined ? normalizePinGlob(ref.path) : null;
  const hashRef = ref.hash !== undefined ? checkHashRef(ref.hash) : null;
  const stub = docSessionStub(ctx);
  // Refusing before scanning: without a session there is nothing to pin to.
  if ((await stub.current()) === null) throw noActiveSession("pin to");

  let entries: PinEntry[];
  let documents: MatchedDocument[];
  let matched: number;
  let scanTruncated = false;
  if (glob !== null) {
    const m = await matchGlob(ctx, glob);
    entries = [{ kind: "path", value: glob }];
    ({ documents, matched } = m);
    scanTruncated = m.scan_truncated;
  } else {
    const m = await matchHash(ctx, hashRef!);
    if (hashRef!.length < 64 && m.hashes.length === 0) {
      throw notFound("document with hash prefix", hashRef!, "No live document's hash starts with it. Check the hash, or pin the full 64-character hash to cover content you add later.");
    }
    if (m.hashes.length > MAX_HASH_PREFIX_MATCHES) {
      throw invalidInput(`hash prefix '${hashRef}' matches ${m.hashes.length} different contents`, "Give more characters of the hash.");
    }
    // A full hash is kept even when nothing has that content yet; a prefix becomes the hashes it names now.
    entries = hashRef!.length === 64 ? [{ kind: "hash", value: hashRef! }] : m.hashes.map((h) => ({ kind: "hash" as const, value: h }));
    ({ documents, matched } = m);
  }

  const out = await stub.pin({ entries, now: iso(ctx.clock.now()), maxPins: MAX_PINS_PER_SESSION });
  if (!out.ok) {
    if (out.reason === "no_active_session") throw noActiveSession("pin to");
    throw new ToolError("too_many_pins", `Session '${out.session}' holds ${out.total_pins} pins; at most ${MAX_PINS_PER_SESSION} are kept per session.`, {
      hint: "Unpin some, or pin a broader glob (e.g. 'docs/**') instead of many single paths.",
    });
  }
  const result: Record<string, unknown> = {
    session: out.session,
    pinned: documents,
    matched,
    added: out.added,
    already_pinned: out.already,
    total_pins: out.total_pins,
  };
  if (matched > documents.length) result.listed = documents.length;
  if (scanTruncated) result.scan_truncated = true;
  if (matched === 0) {
    result.note = `'${excerpt(glob ?? hashRef!)}' matches no live document now; the pin is kept and covers documents added later that match it.`;
  }
  return result;
}

export async function unpinFromSession(ctx: Ctx, input: { path?: string | undefined; hash?: string | undefined }): Promise<Record<string, unknown>> {
  const ref = checkRef(input);
  const entry: PinEntry = ref.path !== undefined ? { kind: "path", value: normalizePinGlob(ref.path) } : { kind: "hash", value: checkHashRef(ref.hash!) };
  const out = await docSessionStub(ctx).unpin(entry);
  if (!out.ok) {
    if (out.reason === "no_active_session") throw noActiveSession("unpin from");
    const shown = out.pins.slice(0, 20).map((p) => `${p.kind} ${p.value}`);
    throw new ToolError("not_found", `${entry.kind} '${excerpt(entry.value)}' is not pinned in session '${out.session}'.`, {
      hint: shown.length > 0 ? `Unpin a glob exactly as it was pinned, or a hash by its first 8+ characters. Pinned now: ${shown.join("; ")}.` : "The session has no pins.",
    });
  }
  // The documents the removed pins covered, so the caller sees what left the scope.
  const documents: MatchedDocument[] = [];
  let matched = 0;
  for (const p of out.removed) {
    const m = p.kind === "path" ? await matchGlob(ctx, p.value) : await matchHash(ctx, p.value);
    matched += m.matched;
    for (const d of m.documents) if (documents.length < MAX_LISTED_MATCHES) documents.push(d);
  }
  return { session: out.session, unpinned: documents, matched, removed: out.removed, total_pins: out.total_pins };
}

/**
 * What the caller's current session covers, for list and search (`use_session`): null when no
 * session is current or it has no pins, so an empty session never hides the whole store.
 */
export async function currentScope(ctx: Ctx): Promise<DocScope | null> {
  const s = await docSessionStub(ctx).current();
  if (!s || s.pinned.length === 0) return null;
  return {
    patterns: s.pinned.filter((p) => p.kind === "path").map((p) => p.value),
    hashes: s.pinned.filter((p) => p.kind === "hash").map((p) => p.value),
  };
}

/** The caller's current session with its pins, or null (e.g. for `watch` and `status`). */
export async function currentSession(ctx: Ctx): Promise<CurrentSession | null> {
  return docSessionStub(ctx).current();
}

/** Every session of the caller, oldest first, and the current one's name. */
export async function listSessions(ctx: Ctx): Promise<{ current: string | null; sessions: SessionView[] }> {
  return docSessionStub(ctx).list();
}

/** Whether a live document is within a session's pins; null when the scope restricts nothing. */
export function scopeMatcher(scope: DocScope | null | undefined): ((path: string, hash: string) => boolean) | null {
  if (!scope || (scope.patterns.length === 0 && scope.hashes.length === 0)) return null;
  const globs = globMatcher(scope.patterns);
  const hashes = scope.hashes.map((h) => h.toLowerCase());
  return (path, hash) => globs(path) || hashes.some((h) => hash.startsWith(h));
}
