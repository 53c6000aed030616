/** The change ledger's eight tools (seed 000). Handlers are one call into the services. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../core/define-tool";
import { excerpt } from "../core/errors";
import { d1Reader, verifyChain } from "./chain";
import { decodeCursor, encodeCursor, eventSchema } from "./events";
import { logChange } from "./log-change";
import { DEFAULT_WINDOW_MINUTES, priorAttempts } from "./prior-attempts";
import { blame, changeDiff, changeHistory, changeSearch, changeset, SEARCH_QUERY_MAX } from "./queries";
import { staleDecisions } from "./stale-decisions";
import { CHANGE_TYPES } from "./vocab";

const PATH_MAX = 1024;
const LABEL_MAX = 256;

const entityPathField = (description: string) => z.string().min(1).max(PATH_MAX).describe(description);
const limitField = (def: number) => z.number().int().min(1).max(1000).default(def).describe("Results to return.");
const cursorField = z.string().max(200).optional().describe("next_cursor of the previous page.");
const label = (description: string) => z.string().max(LABEL_MAX).optional().describe(description);

const page = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item).describe("The results."),
    next_cursor: z.string().optional().describe("Pass as cursor to get the next page; absent on the last page."),
  });

function closest(word: string, options: readonly string[]): string | undefined {
  const dist = (a: string, b: string) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) d[0]![j] = j;
    for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length]![b.length]!;
  };
  const best = options.map((o) => [o, dist(word.toLowerCase(), o)] as const).sort((x, y) => x[1] - y[1])[0];
  return best && best[1] <= 2 ? best[0] : undefined;
}

const changeTypeField = z
  .enum(CHANGE_TYPES, {
    error: (issue) => {
      const given = typeof issue.input === "string" ? excerpt(issue.input, 40) : typeof issue.input;
      // Edit distance is quadratic: a suggestion is only worth computing for a plausible typo.
      const guess = typeof issue.input === "string" && issue.input.length <= 32 ? closest(issue.input, CHANGE_TYPES) : undefined;
      return `invalid change_type '${given}'; must be one of: [${[...CHANGE_TYPES].sort().join(", ")}]${guess ? ` (did you mean '${guess}'?)` : ""}`;
    },
  })
  .describe("What happened; a typo is rejected and nothing is written.");

export const logChangeTool = defineTool({
  name: "log_change",
  title: "Log a code change",
  toolset: "changes",
  description: "Record what changed and why, after every meaningful change. Append-only; warnings never block the write.",
  input: z.object({
    entity_path: entityPathField("The thing that changed: users.email, src/auth.py::login, env/STRIPE_SECRET_KEY, deps/stripe."),
    change_type: changeTypeField,
    entity_type: z.string().max(64).optional().describe("column, table, file, function, class, endpoint, dependency, env_var, index, schema, config or other (default)."),
    diff: z.string().max(1_000_000).optional().describe("The diff (recommended; over 64KB truncated with a warning)."),
    reasoning: z.string().max(200_000).optional().describe("Why, from your own context (weak or missing reasoning draws a warning)."),
    agent: label("Your agent's name (claude-code, …); default: your key's actor."),
    session_id: label("Session correlation id (default: the MCP session)."),
    git_commit: z
      .string()
      .max(64)
      .regex(/^(?:[0-9a-fA-F]{4,64})?$/, "git_commit must be a hex commit hash (4–64 characters)")
      .optional()
      .describe("Commit hash, when known."),
    project: label("Project name (default: your run's repository's project, else the repository's name)."),
    changeset_id: label("Slug grouping the changes of one feature or task."),
    rename_from: z.string().max(PATH_MAX).optional().describe("With change_type 'rename': the previous path (entity_path is the new one)."),
    revisit_after: z.string().max(64).optional().describe("Revisit on a date (2026-12-01) or after an offset (90d, 6mo)."),
    expires_when: z
      .string()
      .max(PATH_MAX + 32)
      .optional()
      .describe("When the decision stops holding: library:NAME>=VERSION, entity:PATH:changes, date:YYYY-MM-DD or manual:LABEL."),
    stale_when: z.string().max(2000).optional().describe("Conditions that should prompt a review."),
    supersedes: z.string().max(64).optional().describe("With change_type 'supersede': the removal it re-opens (default: the latest)."),
    constraint: z.string().max(2000).optional().describe("What the change must keep holding (a limit, an invariant); found by change_search."),
  }),
  output: z.object({
    id: z.string().describe("The new event's id (for a rename, the create event on the new path)."),
    timestamp: z.string().describe("When it was logged (UTC ISO-8601)."),
    status: z.literal("ok").describe("'ok' when the event was written."),
    error: z.literal("").describe('Always "" on success; failures use the error envelope.'),
    warnings: z.array(z.string()).describe("Advisory warnings; the event was written regardless."),
    supersedes: z.string().describe('Id of the removal this supersede re-opened, or "".'),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  // Each call is a new event, except a retry: the identical call resent at once (no other
  // log_change in between) replays the first instead of putting the event in the ledger twice.
  idempotency: "derived",
  keyedBatch: true,
  run: (ctx, input) => logChange(ctx, input),
  summarize: (r) => `Logged ${r.id}${r.warnings.length ? ` with ${r.warnings.length} warning(s)` : ""}.`,
});

export const changeDiffTool = defineTool({
  name: "change_diff",
  seedName: "diff",
  title: "Diff an entity's history",
  toolset: "changes",
  description: "History of an entity or dotted prefix (users → users, users.*), newest first. (Seed name: diff.)",
  input: z.object({
    entity_path: entityPathField("Exact entity or dotted prefix."),
    limit: limitField(20),
    cursor: cursorField,
  }),
  output: page(eventSchema),
  fields: true,
  annotations: READ_ONLY,
  run: (ctx, input) => changeDiff(ctx, input),
  summarize: (r) => `${r.items.length} event(s).`,
});

export const blameTool = defineTool({
  name: "blame",
  title: "Blame an entity",
  toolset: "changes",
  description: "The latest change to an exact entity, with its reasoning and decision status; run it before touching something.",
  input: z.object({ entity_path: entityPathField("The exact entity.") }),
  output: eventSchema.extend({
    status: z.enum(["active", "reverted", "reopened", "no_history"]).describe("Decision status from the latest event."),
    error: z.string().describe("\"\" when found; 'No history found for …' on a miss."),
  }),
  annotations: READ_ONLY,
  run: (ctx, input) => blame(ctx, input),
  summarize: (r) => (r.error ? r.error : `${r.change_type} by ${r.agent || "unknown"} at ${r.timestamp}.`),
});

export const changeHistoryTool = defineTool({
  name: "change_history",
  seedName: "history",
  title: "Browse history",
  toolset: "changes",
  description: "Filtered history across all entities, newest first. (Seed name: history.)",
  input: z.object({
    since: z.string().max(64).optional().describe("Only since: 24h, 7d, … or ISO-8601."),
    entity_path: z.string().max(PATH_MAX).optional().describe("Exact entity or dotted prefix."),
    project: label("Exact project name."),
    changeset_id: label("Exact changeset slug."),
    limit: limitField(50),
    cursor: cursorField,
  }),
  output: page(eventSchema),
  fields: true,
  annotations: READ_ONLY,
  run: (ctx, input) => changeHistory(ctx, input),
  summarize: (r) => `${r.items.length} event(s).`,
});

export const changesetTool = defineTool({
  name: "changeset",
  title: "Get a changeset",
  toolset: "changes",
  description: "All events under a changeset slug, oldest first.",
  input: z.object({
    changeset_id: z.string().min(1).max(LABEL_MAX).describe("The changeset slug."),
    limit: limitField(1000),
    cursor: cursorField,
  }),
  output: page(eventSchema).extend({ error: z.string().describe("\"\" when events were found; 'No events found for changeset …' otherwise.") }),
  fields: true,
  annotations: READ_ONLY,
  run: (ctx, input) => changeset(ctx, input),
  summarize: (r) => (r.error ? r.error : `${r.items.length} event(s), oldest first.`),
});

export const changeSearchTool = defineTool({
  name: "change_search",
  seedName: "search",
  title: "Search events",
  toolset: "changes",
  description: "Literal substring search over path, diff, reasoning, agent and constraint, newest first. (Seed name: search.)",
  input: z.object({
    query: z.string().min(1).max(SEARCH_QUERY_MAX).describe("Text to find."),
    limit: limitField(20),
    cursor: cursorField,
  }),
  output: page(eventSchema),
  fields: true,
  annotations: READ_ONLY,
  run: (ctx, input) => changeSearch(ctx, input),
  summarize: (r) => `${r.items.length} match(es).`,
});

const attemptSchema = eventSchema.extend({
  outcome: z.enum(["reverted", "reopened", "rejected", "active"]).describe("Inferred outcome of the attempt."),
  confidence: z
    .enum(["exact", "proximity_high", "proximity_low"])
    .describe("exact: closed by revert/reject; proximity_*: an add→remove inside / outside the window; active attempts are proximity_low."),
  outcome_reasoning: z.string().describe('Why it was undone (the removal\'s reasoning), or "" while active.'),
  supersede_reasoning: z.string().describe('Reasoning of the supersede that re-opened it, or "".'),
  current_status: z.enum(["active", "reverted", "reopened", "no_history"]).describe("The entity's status now."),
  match_type: z.enum(["exact", "substring", "near_name", "fuzzy"]).describe("How it was found: entity_path, description, a near-identical name of entity_path, or fuzzy."),
  similarity: z.number().describe("Semantic similarity (0–1) of a fuzzy match, else 0."),
  note: z.string().describe('Extra note, or "".'),
});

export const priorAttemptsTool = defineTool({
  name: "prior_attempts",
  title: "Prior attempts on an entity",
  toolset: "changes",
  description: "Call before editing an entity: earlier attempts and how they ended, not to repeat one undone. Usually empty.",
  input: z.object({
    entity_path: z.string().max(PATH_MAX).optional().describe("The entity you will change (exact or dotted prefix)."),
    description: z.string().max(4096).optional().describe("Free text when you have no path; a substring of reasoning, diffs and paths."),
    fuzzy: z.string().max(4096).optional().describe("Free text to match by meaning (match_type fuzzy)."),
    min_confidence: z.enum(["proximity_high", "proximity_low"]).default("proximity_high").describe("proximity_low adds active attempts and distant removals."),
    window_minutes: z.number().int().min(1).max(525_600).default(DEFAULT_WINDOW_MINUTES).describe("An add→remove pair within this is proximity_high."),
    limit: limitField(20),
  }),
  output: page(attemptSchema).extend({ note: z.string().describe('Why fuzzy fell back to substring or missed events, or "".') }),
  fields: true,
  annotations: READ_ONLY,
  run: (ctx, input) => priorAttempts(ctx, input),
  summarize: (r) => (r.items.length ? `${r.items.length} prior attempt(s).` : "No prior attempts at this confidence."),
});

const staleSchema = eventSchema.extend({
  flag: z.enum(["expired", "revisit_due", "review_suggested", "manual_review"]).describe("Why it surfaced (precedence expired > revisit_due > review_suggested > manual_review)."),
  revisit_due: z.string().describe('When the revisit fell due (UTC ISO-8601), or "".'),
  days_overdue: z.number().int().min(0).describe("Whole days past the revisit date (0 if not date-due)."),
  active_use_signals: z.array(z.string()).describe("Signals that the entity is in use: queried, changeset_activity, code_changed (a push changed its file)."),
  matched_terms: z.array(z.string()).describe("stale_when keywords echoed by later work."),
  matched_event_id: z.string().describe('The later event that echoed stale_when, or "".'),
  expires_status: z.enum(["", "expired", "not_expired", "manual_review"]).describe('Result of evaluating expires_when, or "".'),
  expired_pattern: z.string().describe('The expires_when that fired, or "".'),
  expires_detail: z.string().describe("What the expiry check found."),
  stale_reason: z.string().describe("One templated sentence saying why."),
});

export const staleDecisionsTool = defineTool({
  name: "stale_decisions",
  title: "Stale decisions due for revisit",
  toolset: "changes",
  description: "Decisions due for a revisit whose entity is still in use, most overdue first.",
  input: z.object({
    entity_path: z.string().max(PATH_MAX).optional().describe("Only this entity (exact or dotted prefix)."),
    project: label("Exact project name."),
    agent: label("Exact agent name; 'me' means your key's."),
    limit: limitField(20),
  }),
  output: page(staleSchema),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => ({ items: await staleDecisions(ctx, input) }),
  summarize: (r) => `${r.items.length} decision(s) to revisit.`,
});

export const changeVerifyTool = defineTool({
  name: "change_verify",
  // The seed's `selvedge verify` command, as a tool.
  seedName: "verify",
  title: "Verify the tamper-evident log",
  toolset: "changes",
  description: "Check the tenant's hash chain over change events and decisions; names the first row edited, deleted or written around the ledger. (Seed: selvedge verify.)",
  input: z.object({
    limit: z.number().int().min(1).max(5000).default(1000).describe("Chain entries to check in this call."),
    cursor: cursorField,
  }),
  output: z.object({
    intact: z.boolean().describe("False when a break was found."),
    checked: z.number().int().describe("Chain entries checked by this call."),
    position: z.number().int().describe("Position of the last entry checked."),
    first_break: z
      .object({
        position: z.number().int().nullable().describe("Chain position of the break; null for a row with no entry."),
        kind: z.enum(["event", "decision", ""]).describe("What the broken row is."),
        row_id: z.string().describe('The row\'s id, or "".'),
        reason: z.enum(["edited", "deleted", "link_broken", "unchained"]).describe("What was found."),
        message: z.string().describe("One sentence."),
      })
      .nullable()
      .describe("The first broken link, or null."),
    unchained_legacy: z.number().int().describe("Rows from before the chain existed, not chained yet (the nightly sweep chains them)."),
    next_cursor: z.string().optional().describe("More entries follow: pass as cursor to continue."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const { next_position, ...r } = await verifyChain(d1Reader(ctx.d1), ctx.tenantId, { after: decodeCursor(input.cursor) ?? 0, limit: input.limit });
    return { ...r, ...(next_position !== undefined ? { next_cursor: encodeCursor(next_position) } : {}) };
  },
  summarize: (r) => (r.first_break ? `BROKEN: ${r.first_break.message}.` : `${r.checked} link(s) intact${r.next_cursor ? "; more follow" : ""}.`),
});

export const changeTools = [logChangeTool, changeDiffTool, blameTool, changeHistoryTool, changesetTool, changeSearchTool, priorAttemptsTool, staleDecisionsTool, changeVerifyTool];
