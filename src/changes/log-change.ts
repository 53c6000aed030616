/** log_change: the change ledger's only writer. */
import { and, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { byColumnName, compiled, compiledInsert, dbOf, type Db } from "../db/client";
import { uuidv7 } from "../db/ids";
import { events, type NewEvent, projectRepositories, projects, repositories, runs } from "../db/schema";
import { iso, parseIsoInstant, parseOffset } from "../core/time";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { activityStatement } from "../work/shared";
import { lookupProject } from "../work/projects/model";
import { embedAfterResponse, embedReads, queueEmbedding, type EmbedRef } from "../search/semantic";
import { changeEventEmbedText } from "../search/sources";
import { appendChained } from "./chain";
import { formatExpiresWhen, parseExpiresWhen } from "./expires";
import { canonicalPath, pathMatch } from "./paths";
import { e } from "./events";
import { CHANGE_TYPES, ENTITY_TYPES, REMOVALS, type ChangeType, type EntityType } from "./vocab";
import { boundText, changeWarnings, DIFF_MAX_BYTES, REASONING_MAX_BYTES, secretWarnings } from "./warnings";

export interface LogChangeInput {
  entity_path: string;
  change_type: ChangeType;
  entity_type?: string;
  diff?: string;
  reasoning?: string;
  agent?: string;
  session_id?: string;
  git_commit?: string;
  project?: string;
  changeset_id?: string;
  rename_from?: string;
  revisit_after?: string;
  expires_when?: string;
  stale_when?: string;
  supersedes?: string;
  constraint?: string;
}

export interface LogChangeResult {
  id: string;
  timestamp: string;
  status: "ok";
  error: "";
  warnings: string[];
  supersedes: string;
}

const REMOVAL_LIST = [...REMOVALS];

/** Resolves `revisit_after` to its stored spelling and the instant it falls due. */
export function resolveRevisit(raw: string, loggedAt: Date): { stored: string; due: string } {
  const text = raw.trim();
  if (text === "") return { stored: "", due: "" };
  const offset = parseOffset(text);
  if (offset !== null) return { stored: text.toLowerCase(), due: iso(new Date(loggedAt.getTime() + offset)) };
  const at = parseIsoInstant(text);
  if (at) return { stored: iso(at), due: iso(at) };
  throw new ToolError("invalid_revisit_after", `could not parse revisit_after '${raw}' as an ISO-8601 date or a relative offset`, {
    hint: "Use a date such as 2026-12-01, or an offset from now such as 90d, 6mo or 1y (m = minutes, mo = months).",
  });
}

async function resolveSupersede(ctx: Ctx, path: string, explicitId: string): Promise<{ id: string; entityType: string }> {
  const found = (where: SQL) =>
    dbOf(ctx)
      .select({ id: e.id, entityType: e.entityType })
      .from(e)
      .where(and(eq(e.tenantId, ctx.tenantId), where, pathMatch(e.entityPath, path)))
      .orderBy(desc(e.seq))
      .limit(1)
      .get();
  if (explicitId !== "") {
    const row = await found(eq(e.id, explicitId));
    if (!row) {
      throw new ToolError("supersede_target_not_found", `supersedes id '${explicitId}' does not match any event on entity '${path}'`, {
        hint: "Pass the id of an event on this entity (see change_diff or prior_attempts), or omit supersedes to re-open the most recent removal.",
      });
    }
    return row;
  }
  const row = await found(inArray(e.changeType, REMOVAL_LIST));
  if (!row) {
    throw new ToolError("no_removal_to_supersede", `no reverted decision to supersede on '${path}' — no removal event (${REMOVAL_LIST.join(", ")}) found`, {
      hint: "Pass an explicit event id in supersedes, or log the change with another change_type.",
    });
  }
  return row;
}

/**
 * The project an event is filed under when the caller names none. Keys carry no project, so it
 * comes from the repository the caller's run works in (run_heartbeat), or the repository an
 * import reads (`repositoryId`): the project that repository is the one primary repository of,
 * else the repository's name, which is what the seed's default (the project root's basename) is
 * for a checkout of it. With neither there is nothing to go by: "".
 */
export async function defaultProject(ctx: Ctx, repositoryId?: string): Promise<string> {
  if (!ctx.runId && !repositoryId) return "";
  const statement = repositoryId ? projectOfRepository(ctx.d1, { tenant: ctx.tenantId, id: repositoryId }) : projectOfRun(ctx.d1, { tenant: ctx.tenantId, id: ctx.runId! });
  const row = await statement.first<{ repository: string; project: string | null }>();
  return row?.project ?? row?.repository ?? "";
}

const [u, r, pr, p] = [alias(runs, "u"), alias(repositories, "r"), alias(projectRepositories, "pr"), alias(projects, "p")];

/** A repository's name and the one live project it is the primary repository of (null when it is none or several's). */
const defaultProjectFields = (db: Db) => {
  const primaryProject = db
    .select({ key: sql<string | null>`CASE WHEN COUNT(*) = 1 THEN MAX(${p.key}) END` })
    .from(pr)
    .innerJoin(p, and(eq(p.tenantId, pr.tenantId), eq(p.id, pr.projectId)))
    .where(and(eq(pr.tenantId, r.tenantId), eq(pr.repositoryId, r.id), eq(pr.role, "primary"), isNull(p.deletedAt)));
  return { repository: sql<string>`${r.name}`.as("repository"), project: sql<string | null>`(${primaryProject})`.as("project") };
};

// Compiled once: every change attributed to a run or a repository reads its default project.
const projectOfRepository = compiled(["tenant", "id"], (db, v) =>
  db
    .select(defaultProjectFields(db))
    .from(r)
    .where(and(eq(r.tenantId, v.tenant), eq(r.id, v.id))),
);
const projectOfRun = compiled(["tenant", "id"], (db, v) =>
  db
    .select(defaultProjectFields(db))
    .from(u)
    .innerJoin(r, and(eq(r.tenantId, u.tenantId), eq(r.id, u.repositoryId)))
    .where(and(eq(u.tenantId, v.tenant), eq(u.id, v.id))),
);

// Compiled once: every change inserts its rows.
const insertEvent = compiledInsert(events);

/** A change validated and turned into the rows it writes (two for a rename), not written yet. */
export interface PreparedChange {
  /** The event the caller is told about (for a rename, the create on the new path). */
  id: string;
  timestamp: string;
  rows: NewEvent[];
  warnings: string[];
  supersedes: string;
  changeType: ChangeType;
  path: string;
  renameFrom: string;
  reasoning: string;
}

export interface PrepareOptions {
  /** When the change happened: now for log_change, the original time for an import. */
  at: Date;
  /** The project when the input names none, already resolved (an import resolves it once for all its events). */
  defaultProject?: string;
  /**
   * false: only the warnings a stored event still needs acted on (truncation, secrets), not advice
   * on how to log the next change: an import cannot improve history it copies.
   */
  advice?: false;
}

/** log_change's validation and row building, shared with the importers (src/changes/import). */
export async function prepareChange(ctx: Ctx, input: LogChangeInput, opts: PrepareOptions): Promise<PreparedChange> {
  const path = canonicalPath(input.entity_path);
  if (path === "") {
    throw new ToolError("invalid_entity_path", "entity_path must be a non-empty string", {
      hint: "Name the thing that changed, e.g. users.email, src/auth.py::login, env/STRIPE_SECRET_KEY or deps/stripe.",
    });
  }
  const changeType = input.change_type;
  if (!CHANGE_TYPES.includes(changeType)) {
    throw new ToolError("invalid_change_type", `invalid change_type '${changeType}'`, { hint: `Use one of: ${CHANGE_TYPES.join(", ")}.` });
  }
  // As in the seed, "" means "not given" for every optional text field.
  const renameGiven = (input.rename_from ?? "").trim() !== "";
  const renameFrom = renameGiven ? canonicalPath(input.rename_from!) : "";
  if (renameGiven && changeType !== "rename") {
    throw new ToolError("invalid_rename", "rename_from is only valid with change_type='rename'", {
      hint: "Set change_type to 'rename' with the new path in entity_path and the old one in rename_from.",
    });
  }
  if (changeType === "rename" && renameGiven && renameFrom === path) {
    throw new ToolError("invalid_rename", "rename_from must name the entity's previous path, different from entity_path", {
      hint: "Put the old path in rename_from and the new path in entity_path.",
    });
  }
  if ((input.supersedes ?? "").trim() !== "" && changeType !== "supersede") {
    throw new ToolError("invalid_supersedes", "supersedes is only valid with change_type='supersede'", {
      hint: "Set change_type to 'supersede' to re-open an earlier removal, or drop supersedes.",
    });
  }

  const now = opts.at;
  const timestamp = iso(now);
  const revisit = resolveRevisit(input.revisit_after ?? "", now);
  const expiresWhen = input.expires_when?.trim() ? formatExpiresWhen(parseExpiresWhen(input.expires_when)) : "";
  const warnings: string[] = [];

  let entityType: EntityType = "other";
  const rawType = input.entity_type?.trim().toLowerCase() ?? "";
  if ((ENTITY_TYPES as readonly string[]).includes(rawType)) entityType = rawType as EntityType;
  else if (rawType !== "") warnings.push(`entity_type '${input.entity_type}' is not recognized; stored as 'other' (known: ${ENTITY_TYPES.join(", ")})`);

  let supersedes = "";
  if (changeType === "supersede") {
    const target = await resolveSupersede(ctx, path, input.supersedes?.trim() ?? "");
    supersedes = target.id;
    if (rawType === "") entityType = target.entityType as EntityType;
  }

  const diff = boundText(input.diff ?? "", DIFF_MAX_BYTES, "diff");
  const reasoning = boundText(input.reasoning ?? "", REASONING_MAX_BYTES, "reasoning");
  for (const w of [diff.warning, reasoning.warning]) if (w) warnings.push(w);
  warnings.push(
    ...(opts.advice === false ? secretWarnings : changeWarnings)({
      entityPath: path,
      entityType,
      changeType,
      reasoning: reasoning.text,
      diff: diff.text,
      revisitAfter: revisit.stored,
      expiresWhen,
      staleWhen: input.stale_when?.trim() ?? "",
    }),
  );
  if (revisit.due !== "" && revisit.due <= timestamp) {
    warnings.push(`revisit_after '${input.revisit_after}' is already due; stale_decisions may surface it right away`);
  }

  const metadata: Record<string, unknown> = {};
  const constraint = input.constraint?.trim() ?? "";
  const base = {
    tenantId: ctx.tenantId,
    timestamp,
    // The name the client gives is what the seed shows, searches and filters by; the key's actor
    // (actor_id) is recorded beside it and is what tenancy, authority and notices go by.
    agent: input.agent?.trim() || ctx.actorName,
    actorId: ctx.actorId,
    sessionId: input.session_id?.trim() || ctx.sessionId,
    gitCommit: input.git_commit?.trim() ?? "",
    project: input.project?.trim() || (opts.defaultProject ?? (await defaultProject(ctx))),
    changesetId: input.changeset_id?.trim() ?? "",
  };
  const id = uuidv7(now.getTime());
  const rows: NewEvent[] = [];
  if (changeType === "rename" && renameFrom !== "") {
    // The dual-event pattern: history on the old path ends with a rename, and the new path
    // starts with a create that remembers where it came from. The decision fields go on the create.
    rows.push({
      ...base,
      id: uuidv7(now.getTime()),
      entityPath: renameFrom,
      entityType,
      changeType: "rename",
      diff: diff.text,
      reasoning: reasoning.text,
      metadata: JSON.stringify({ ...metadata, renamed_to: path }),
      revisitAfter: "",
      revisitDue: "",
      expiresWhen: "",
      staleWhen: "",
      supersedes: "",
      constraint: "",
    });
    rows.push({
      ...base,
      id,
      entityPath: path,
      entityType,
      changeType: "create",
      diff: diff.text,
      reasoning: reasoning.text,
      metadata: JSON.stringify({ ...metadata, renamed_from: renameFrom }),
      revisitAfter: revisit.stored,
      revisitDue: revisit.due,
      expiresWhen,
      staleWhen: input.stale_when?.trim() ?? "",
      supersedes: "",
      constraint,
    });
  } else {
    rows.push({
      ...base,
      id,
      entityPath: path,
      entityType,
      changeType,
      diff: diff.text,
      reasoning: reasoning.text,
      metadata: JSON.stringify(metadata),
      revisitAfter: revisit.stored,
      revisitDue: revisit.due,
      expiresWhen,
      staleWhen: input.stale_when?.trim() ?? "",
      supersedes,
      constraint,
    });
  }
  return { id, timestamp, rows, warnings, supersedes, changeType, path, renameFrom, reasoning: reasoning.text };
}

export async function logChange(ctx: Ctx, input: LogChangeInput): Promise<LogChangeResult> {
  const c = await prepareChange(ctx, input, { at: ctx.clock.now() });
  const base = c.rows[c.rows.length - 1]!;
  // In the feed of the work-ledger project whose key (or id) the change carries, if there is one.
  const activity = activityStatement(ctx, {
    verb: "change.logged",
    objectType: "change",
    objectId: c.id,
    projectId: base.project === "" ? null : ((await lookupProject(ctx, base.project))?.id ?? null),
    summary: changeSummary(c.changeType, c.path, c.renameFrom, c.reasoning),
    metadata: { change_type: c.changeType, entity_path: c.path, agent: base.agent, ...(base.changesetId ? { changeset_id: base.changesetId } : {}) },
  });
  const result: LogChangeResult = { id: c.id, timestamp: c.timestamp, status: "ok", error: "", warnings: c.warnings, supersedes: c.supersedes };
  // The answer is known before the write: the call's idempotency record completes in the same batch.
  // The call's key is taken in the same batch (keyedBatch): a held key fails the write whole.
  await appendEvents(ctx, c.rows, ctx.keyed ? [...ctx.keyed.open(), activity, ctx.keyed.done(result)] : [activity], { embedNow: true });
  return result;
}

/**
 * Writes event rows with their chain entries and embedding queue rows, plus `extra` statements, in
 * one atomic batch: both halves of a rename land with their chain entries, or nothing does.
 * `embedNow` embeds right after the response; otherwise the scheduled backfill does it.
 */
export async function appendEvents(ctx: Ctx, rows: NewEvent[], extra: D1PreparedStatement[], opts: { embedNow: boolean }): Promise<void> {
  const now = ctx.clock.now();
  // Embedded for prior_attempts' fuzzy recall, as decisions are: queued in the write's batch.
  const embedRefs: EmbedRef[] = rows.map((r) => ({ tenantId: ctx.tenantId, type: "change_event", id: r.id }));
  const queued = await Promise.all(rows.map((r, i) => queueEmbedding(ctx.d1, embedRefs[i]!, changeEventEmbedText(r.entityPath, r.changeType, r.reasoning), now)));
  // What the embedding after the response reads first, read at the end of the write's own batch.
  const reads = opts.embedNow ? embedReads(ctx.d1, embedRefs) : null;
  const results = await appendChained(
    ctx.d1,
    ctx.tenantId,
    iso(now),
    [...rows.map((r) => insertEvent(ctx.d1, r)), ...queued, ...extra, ...(reads?.statements ?? [])],
    rows.map((r) => ({ kind: "event", row: byColumnName(events, r) })),
    (drain) => ctx.waitUntil(drain),
  );
  if (reads) embedAfterResponse(ctx, embedRefs, reads.take(results.slice(results.length - reads.statements.length)));
}

const SUMMARY_REASONING_CHARS = 160;

/** The feed's one line for a change: what happened to which entity, and the start of why. */
export function changeSummary(changeType: string, path: string, renameFrom: string, reasoning: string): string {
  const what = changeType === "rename" && renameFrom !== "" ? `rename ${renameFrom} → ${path}` : `${changeType} ${path}`;
  const why = reasoning.split("\n")[0]!.trim();
  if (why === "") return what;
  return `${what}: ${why.length > SUMMARY_REASONING_CHARS ? `${why.slice(0, SUMMARY_REASONING_CHARS - 1)}…` : why}`;
}
