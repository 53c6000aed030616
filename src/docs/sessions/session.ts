/** The docs_session actions (seed 003 "Tool 3: session"): start, stop, pin, unpin. `watch` lives apart. */
import { z } from "zod";
import { invalidInput } from "../../core/errors";
import { dropWatchesForSession } from "../github/watch";
import { defineOp } from "../shared";
import { MAX_PATH_CHARS } from "../store/store";
import { MAX_SESSION_DESCRIPTION_CHARS, MAX_SESSION_NAME_CHARS, pinToSession, startSession, stopSession, unpinFromSession } from "./model";

const sessionName = z.string().min(1).max(MAX_SESSION_NAME_CHARS).describe(`Session name: 1-${MAX_SESSION_NAME_CHARS} letters, digits, spaces and _ . : @ / - (e.g. "feature-review").`);

const pinRef = {
  path: z.string().min(1).max(MAX_PATH_CHARS).optional().describe("A glob over document paths (e.g. 'docs/**/*.md', or one exact path). Give this or hash."),
  hash: z.string().min(8).max(64).optional().describe("A document's content hash: all 64 hex characters, or a prefix of at least 8. Give this or path."),
};

export const startOp = defineOp({
  name: "start",
  category: "session",
  description: "Start a docs session and make it current; a name you already have resumes that session with its pins. Returns { session, current, resumed, previous, sessions }.",
  params: z.strictObject({
    name: sessionName.optional().describe("Session name (alias: label). A new name starts a session, an existing one resumes it. Default: a fresh generated name."),
    description: z.string().max(MAX_SESSION_DESCRIPTION_CHARS).optional().describe("What the session is for, shown back by start and status."),
    warm: z.boolean().default(true).describe("Recorded and reported; this server keeps no per-process cache to preload, so it changes nothing else."),
  }),
  normalize(params) {
    // The seed's own example starts a session with `label`.
    if (!("label" in params)) return params;
    const { label, ...rest } = params;
    if (rest.name !== undefined && rest.name !== label) {
      throw invalidInput("'label' and 'name' differ", "'label' is another spelling of 'name'; pass only one of them.");
    }
    return { ...rest, name: label };
  },
  async run(ctx, p) {
    const name = p.name ?? `session-${ctx.clock.now().toISOString().slice(0, 10)}-${crypto.randomUUID().slice(0, 8)}`;
    return startSession(ctx, { name, description: p.description, warm: p.warm });
  },
});

export const stopOp = defineOp({
  name: "stop",
  category: "session",
  description: "Stop the current docs session (or the one named). clear (default true) forgets it and its pins; clear false keeps them so start can resume it. Afterwards no session is current.",
  params: z.strictObject({
    name: sessionName.optional().describe("The session to stop. Default: the current session."),
    clear: z.boolean().default(true).describe("Drop the session and its pins (true), or keep them for a later start of the same name (false)."),
  }),
  async run(ctx, p) {
    const stopped = await stopSession(ctx, { name: p.name, clear: p.clear });
    // A cleared session is gone, and the watches it held end with it.
    const watchesEnded = p.clear ? await dropWatchesForSession(ctx, String(stopped.session)) : 0;
    return { ...stopped, watches_ended: watchesEnded };
  },
});

export const pinOp = defineOp({
  name: "pin",
  category: "session",
  description:
    "Pin documents to the current session by path glob or content hash; list and search then keep to pinned documents. Returns { session, pinned: [{path, hash}], matched, total_pins }; a glob that matches nothing yet is still kept.",
  params: z.strictObject(pinRef),
  run: (ctx, p) => pinToSession(ctx, p),
});

export const unpinOp = defineOp({
  name: "unpin",
  category: "session",
  description: "Remove a pin from the current session: a glob exactly as pinned, or a hash (full or 8+ character prefix). Returns { session, unpinned: [{path, hash}], removed, total_pins }.",
  params: z.strictObject({
    path: pinRef.path.describe("The glob to unpin, exactly as it was pinned. Give this or hash."),
    hash: pinRef.hash.describe("A pinned hash, or a prefix of at least 8 characters (removes every pinned hash it starts). Give this or path."),
  }),
  run: (ctx, p) => unpinFromSession(ctx, p),
});

/** The session actions this module provides, in the seed's order. */
export const sessionOps = [startOp, stopOp, pinOp, unpinOp];
