/** The change ledger's eight tools (seed 000). Handlers are one call into the services. */
import { z } from "zod";
import { defineTool, type ToolAnnotations } from "../mcp/define-tool";
import { excerpt } from "../mcp/errors";
import { eventSchema } from "./events";
import { logChange } from "./log-change";
import { priorAttempts } from "./prior-attempts";
import { blame, changeDiff, changeHistory, changeSearch, changeset, SEARCH_QUERY_MAX } from "./queries";
import { staleDecisions } from "./stale-decisions";
import { CHANGE_TYPES } from "./vocab";

const READ: ToolAnnotations = { readOnly: true, destructive: false, idempotent: true, openWorld: false };

const PATH_MAX = 1024;
const LABEL_MAX = 256;

const entityPathField = (description: string) => z.string().min(1).max(PATH_MAX).describe(description);
const limitField = (def: number) => z.number().int().min(1).max(1000).default(def).describe(`Maximum number of results (1–1000, default ${def}).`);
const cursorField = z.string().max(200).optional().describe("Opaque next_cursor from the previous page; omit for the first page.");
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
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++)
        d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
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
  .describe(`What happened: ${CHANGE_TYPES.join(" / ")}. Validated against this list; typos are rejected and nothing is written.`);

export const logChangeTool = defineTool({
  name: "log_change",
  title: "Log a code change",
  toolset: "changes",
  description:
    "Record a change event: what changed (entity_path, change_type), the diff, and why (reasoning). The change ledger's only writer; append-only. Call it after every meaningful change, with reasoning taken from your own context. Returns the new event id plus advisory warnings (short or generic reasoning, secret-looking text, path shape, truncation); warnings never block the write.",
  input: z.object({
    entity_path: entityPathField("The thing that changed: users.email, src/auth.py::login, env/STRIPE_SECRET_KEY, deps/stripe. Canonicalized (trimmed, leading ./ stripped, // collapsed, \\ → /; case kept)."),
    change_type: changeTypeField,
    entity_type: z.string().max(64).optional().describe("column / table / file / function / class / endpoint / dependency / env_var / index / schema / config / other. Unrecognized values are stored as 'other' with a warning. Default 'other' (a supersede inherits its target's type)."),
    diff: z.string().max(1_000_000).optional().describe("The diff text. Optional but recommended. Over 64KB it is truncated with a marker and a warning."),
    reasoning: z.string().max(200_000).optional().describe("Why the change was made, from your own context. Empty, very short or generic text draws a warning. Over 32KB it is truncated with a warning."),
    agent: label("Ignored for attribution: the agent is the actor of your API key. A different value is kept as metadata.client_agent with a warning."),
    session_id: label("Session correlation id. Defaults to the MCP session id."),
    git_commit: z.string().max(64).regex(/^(?:[0-9a-fA-F]{4,64})?$/, "git_commit must be a hex commit hash (4–64 characters)").optional().describe("Commit hash, when known (usually backfilled later)."),
    project: label("Project name; used as an exact-match filter by change_history and stale_decisions."),
    changeset_id: label("A slug grouping related changes under one feature or task (see the changeset tool)."),
    rename_from: z.string().max(PATH_MAX).optional().describe("The entity's previous path, for renames: set change_type='rename' and put the new path in entity_path. Writes a rename on the old path and a create on the new one (metadata.renamed_from) atomically. Rejected with any other change_type."),
    revisit_after: z.string().max(64).optional().describe("When to revisit this decision: an ISO-8601 date (2026-12-01) or an offset from now (90d, 6mo, 1y; m = minutes, mo = months). Consumed by stale_decisions."),
    expires_when: z.string().max(PATH_MAX + 32).optional().describe("When the decision stops holding, in a closed grammar: library:NAME>=VERSION, entity:PATH:changes, date:YYYY-MM-DD, manual:LABEL. Anything else is rejected."),
    stale_when: z.string().max(2000).optional().describe("Free text naming conditions that should prompt a review; later changes sharing two or more keywords with it surface the decision in stale_decisions."),
    supersedes: z.string().max(64).optional().describe("With change_type='supersede': the id of the removal (remove/delete/revert/reject…) this re-opens. Omit to re-open the most recent removal on the entity."),
  }),
  output: z.object({
    id: z.string().describe("The new event's id (for a rename, the create event on the new path)."),
    timestamp: z.string().describe("When it was logged (UTC ISO-8601)."),
    status: z.literal("ok").describe("'ok' when the event was written."),
    error: z.literal("").describe("Always \"\" on success; failures use the error envelope."),
    warnings: z.array(z.string()).describe("Advisory warnings; the event was written regardless."),
    supersedes: z.string().describe("Id of the removal this supersede re-opened, or \"\"."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  run: (ctx, input) => logChange(ctx, input),
  summarize: (r) => `Logged ${r.id}${r.warnings.length ? ` with ${r.warnings.length} warning(s)` : ""}.`,
});

export const changeDiffTool = defineTool({
  name: "change_diff",
  title: "Diff an entity's history",
  toolset: "changes",
  description:
    "History of one entity or a dotted prefix of entities, newest first: 'users' returns users and users.* (not usersX). LIKE metacharacters match literally. (Seed name: diff.)",
  input: z.object({
    entity_path: entityPathField("Exact entity (users.email) or dotted prefix (users → users.*)."),
    limit: limitField(20),
    cursor: cursorField,
  }),
  output: page(eventSchema),
  annotations: READ,
  run: (ctx, input) => changeDiff(ctx, input),
  summarize: (r) => `${r.items.length} event(s).`,
});

export const blameTool = defineTool({
  name: "blame",
  title: "Blame an entity",
  toolset: "changes",
  description:
    "The most recent change to an exact entity, with its reasoning and context, plus the entity's decision status (active / reverted / reopened). The query to run before touching something. Exact match only (use change_diff for prefixes). On a miss every field is empty and `error` says no history was found; that is not a failure.",
  input: z.object({ entity_path: entityPathField("The exact entity, e.g. users.email or src/auth.py::login.") }),
  output: eventSchema.extend({
    status: z.enum(["active", "reverted", "reopened", "no_history"]).describe("Decision status from the latest event."),
    error: z.string().describe("\"\" when found; 'No history found for …' on a miss."),
  }),
  annotations: READ,
  run: (ctx, input) => blame(ctx, input),
  summarize: (r) => (r.error ? r.error : `${r.change_type} by ${r.agent || "unknown"} at ${r.timestamp}.`),
});

export const changeHistoryTool = defineTool({
  name: "change_history",
  title: "Browse history",
  toolset: "changes",
  description: "Filtered history across all entities, newest first. (Seed name: history.)",
  input: z.object({
    since: z.string().max(64).optional().describe("Only events at or after this: a relative window (15m, 24h, 7d, 5mo, 1y; m = minutes, mo = months) or an ISO-8601 time. Unparseable values are an error."),
    entity_path: z.string().max(PATH_MAX).optional().describe("Exact entity or dotted prefix."),
    project: label("Exact project name."),
    changeset_id: label("Exact changeset slug."),
    limit: limitField(50),
    cursor: cursorField,
  }),
  output: page(eventSchema),
  annotations: READ,
  run: (ctx, input) => changeHistory(ctx, input),
  summarize: (r) => `${r.items.length} event(s).`,
});

export const changesetTool = defineTool({
  name: "changeset",
  title: "Get a changeset",
  toolset: "changes",
  description: "All events grouped under a feature/task slug, oldest first, to reconstruct the chronology. An unknown slug gives an empty list with `error` set; that is not a failure.",
  input: z.object({
    changeset_id: z.string().min(1).max(LABEL_MAX).describe("The changeset slug."),
    limit: limitField(1000),
    cursor: cursorField,
  }),
  output: page(eventSchema).extend({ error: z.string().describe("\"\" when events were found; 'No events found for changeset …' otherwise.") }),
  annotations: READ,
  run: (ctx, input) => changeset(ctx, input),
  summarize: (r) => (r.error ? r.error : `${r.items.length} event(s), oldest first.`),
});

export const changeSearchTool = defineTool({
  name: "change_search",
  title: "Search events",
  toolset: "changes",
  description:
    "Case-insensitive substring search across entity_path, diff, reasoning and agent, newest first. _ and % match literally, not as wildcards. (Seed name: search.)",
  input: z.object({
    query: z.string().min(1).max(SEARCH_QUERY_MAX).describe(`Free text, matched as a literal substring (up to ${SEARCH_QUERY_MAX} characters).`),
    limit: limitField(20),
    cursor: cursorField,
  }),
  output: page(eventSchema),
  annotations: READ,
  run: (ctx, input) => changeSearch(ctx, input),
  summarize: (r) => `${r.items.length} match(es).`,
});

const attemptSchema = eventSchema.extend({
  outcome: z.enum(["reverted", "reopened", "rejected", "active"]).describe("Inferred outcome of the attempt."),
  confidence: z.enum(["exact", "proximity_high", "proximity_low"]).describe("exact: closed by revert/reject; proximity_*: an add→remove inside / outside the window; active attempts are proximity_low."),
  outcome_reasoning: z.string().describe("Why it was undone (the removal's reasoning), or \"\" while active."),
  supersede_reasoning: z.string().describe("Reasoning of the supersede that re-opened it, or \"\"."),
  current_status: z.enum(["active", "reverted", "reopened", "no_history"]).describe("The entity's status now."),
  match_type: z.enum(["exact", "substring"]).describe("exact: found by entity_path; substring: found by description."),
  similarity: z.number().describe("0 (no semantic matching is applied)."),
  note: z.string().describe("Extra note, or \"\"."),
});

export const priorAttemptsTool = defineTool({
  name: "prior_attempts",
  title: "Prior attempts on an entity",
  toolset: "changes",
  description:
    "Call before editing an entity: earlier attempts on it, each with an inferred outcome (reverted, reopened, rejected, active), so you can change plan instead of repeating a change that was undone. Conservative: by default only clear tried-then-undone cases come back, and an empty list is the normal answer. Deterministic; never writes.",
  input: z.object({
    entity_path: z.string().max(PATH_MAX).optional().describe("The entity you are about to change; exact or dotted prefix (users covers users.email). Provide this or description; it wins if both are given."),
    description: z.string().max(4096).optional().describe("Free text when you have no exact path; matched as a substring against prior reasoning, diffs and paths."),
    min_confidence: z.enum(["proximity_high", "proximity_low"]).default("proximity_high").describe("proximity_high (default): only clear cases (explicit revert/reject, or a removal within the window). proximity_low: also still-active attempts and far-apart removals."),
    window_minutes: z.number().int().min(1).max(525_600).default(10_080).describe("Proximity window for add→remove pairs: within it ⇒ proximity_high, beyond ⇒ proximity_low. Default 10080 (7 days)."),
    limit: limitField(20),
  }),
  output: page(attemptSchema),
  annotations: READ,
  run: async (ctx, input) => ({ items: await priorAttempts(ctx, input) }),
  summarize: (r) => (r.items.length ? `${r.items.length} prior attempt(s).` : "No prior attempts at this confidence."),
});

const staleSchema = eventSchema.extend({
  flag: z.enum(["expired", "revisit_due", "review_suggested", "manual_review"]).describe("Why it surfaced (precedence expired > revisit_due > review_suggested > manual_review)."),
  revisit_due: z.string().describe("When the revisit fell due (UTC ISO-8601), or \"\"."),
  days_overdue: z.number().int().min(0).describe("Whole days past the revisit date (0 if not date-due)."),
  active_use_signals: z.array(z.string()).describe("Signals that the entity is in use: queried, changeset_activity."),
  matched_terms: z.array(z.string()).describe("stale_when keywords echoed by later work."),
  matched_event_id: z.string().describe("The later event that echoed stale_when, or \"\"."),
  expires_status: z.enum(["", "expired", "not_expired", "manual_review"]).describe("Result of evaluating expires_when, or \"\"."),
  expired_pattern: z.string().describe("The expires_when that fired, or \"\"."),
  expires_detail: z.string().describe("What the expiry check found."),
  stale_reason: z.string().describe("One templated sentence saying why."),
});

export const staleDecisionsTool = defineTool({
  name: "stale_decisions",
  title: "Stale decisions due for revisit",
  toolset: "changes",
  description:
    "Dated decisions that have come due and whose entity is still in active use (queried by blame/change_diff/prior_attempts since, or later activity in its changeset), plus decisions whose expires_when fired or whose stale_when is echoed by later work. Pure age never surfaces a decision. Most overdue first. Deterministic; never writes.",
  input: z.object({
    entity_path: z.string().max(PATH_MAX).optional().describe("Only decisions on this entity (exact or dotted prefix)."),
    project: label("Exact project name."),
    agent: label("Exact agent name; 'me' means you."),
    limit: limitField(20),
  }),
  output: page(staleSchema),
  annotations: READ,
  run: async (ctx, input) => ({ items: await staleDecisions(ctx, input) }),
  summarize: (r) => `${r.items.length} decision(s) to revisit.`,
});

export const changeTools = [
  logChangeTool,
  changeDiffTool,
  blameTool,
  changeHistoryTool,
  changesetTool,
  changeSearchTool,
  priorAttemptsTool,
  staleDecisionsTool,
];
