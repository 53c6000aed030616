/**
 * MCP prompts: the built-in workflow prompts (start a session on a project, prepare a handoff,
 * review a change before logging it), joined with the document store's prompts
 * (src/docs/prompts/prompts.ts: its own built-ins and the tenant's PROMPT-*.md documents).
 *
 * Name clashes: a workflow prompt here wins over a document store prompt of the same name (a
 * `PROMPT-start-session.md` is not listed and cannot be fetched), because these prompts read
 * the ledger as the caller sees it and a document cannot. Within the document store, a
 * document still replaces that store's own built-ins (see src/docs/prompts/prompts.ts).
 *
 * Every refusal is an {@link InvalidPromptParams} (JSON-RPC -32602): an unknown prompt, an
 * unknown, missing, over-long or unresolvable argument (a project, task or actor the caller's
 * tenant does not have).
 */
import { and, eq, or } from "drizzle-orm";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { GetPromptResult, Prompt, PromptMessage } from "@modelcontextprotocol/server";
import { changesetTool, blameTool, priorAttemptsTool } from "../changes/tools";
import { canonicalPath } from "../changes/paths";
import { CHANGE_TYPES } from "../changes/vocab";
import { getPrompt as getDocsPrompt, listPrompts as listDocsPrompts, MAX_PROMPT_ARGUMENT_CHARS } from "../docs/prompts/prompts";
import { projectBriefTool } from "../work/projects/brief";
import { findTask, type Task } from "../work/tasks/model";
import type { Ctx } from "../core/context";
import type { AnyToolDef } from "../core/define-tool";
import { excerpt, ToolError } from "../core/errors";
import { callTool } from "../core/call";
import { dbOf } from "../db/client";
import { actors } from "../db/schema";

/** Where a prompt argument's or template variable's completions come from (src/server/completions.ts answers them). */
export type CompletionSource = "project_key" | "open_task" | "actor" | "entity_path" | "changeset" | "guide_topic" | "repo_owner" | "repo_name" | "document_path" | "document_hash";

/**
 * JSON-RPC -32602 Invalid params for prompts/get and completion/complete. A v2 ProtocolError, so
 * the v2 server answers it with its own code and message; the v1 server reads `code` as well.
 */
export class InvalidPromptParams extends ProtocolError {
  constructor(message: string) {
    super(ProtocolErrorCode.InvalidParams, message);
    this.name = "InvalidPromptParams";
  }
}

export interface WorkflowArgument {
  name: string;
  description: string;
  required?: boolean;
  /** Where completion/complete finds values for it (src/server/completions.ts). */
  completion?: CompletionSource;
}

export interface WorkflowPrompt {
  name: string;
  title: string;
  description: string;
  arguments: readonly WorkflowArgument[];
  render(ctx: Ctx, args: Record<string, string>): Promise<PromptMessage[]>;
}

/** Most characters of one tool answer embedded in a prompt; the prompt names the call that gives the rest. */
export const MAX_EMBEDDED_CHARS = 20_000;

const json = (v: unknown) => JSON.stringify(v);

/** A tool call written out for the agent: the tool's name and its arguments as JSON. */
const step = (tool: string, args: Record<string, unknown>) => `${tool} ${json(args)}`;

const text = (t: string): PromptMessage => ({ role: "user", content: { type: "text", text: t } });

/** A tool's structured answer as JSON, bounded; `again` is the call that returns it whole. */
function embedded(value: unknown, again: string): string {
  const body = JSON.stringify(value, null, 1);
  return body.length <= MAX_EMBEDDED_CHARS ? body : `${body.slice(0, MAX_EMBEDDED_CHARS)}\n…[cut at ${MAX_EMBEDDED_CHARS} characters; ${again} returns it whole]`;
}

/**
 * Runs a read tool through the registry (validation, tenancy, the envelope), so what a prompt
 * embeds is what the caller would get from the tool. A refusal becomes the prompt's refusal.
 */
async function read(ctx: Ctx, def: AnyToolDef, args: Record<string, unknown>, what: string): Promise<Record<string, unknown>> {
  const result = await callTool(def, ctx, args);
  const body = result.structuredContent as { ok: boolean; error?: { code: string; message: string; hint: string } } & Record<string, unknown>;
  if (result.isError || !body.ok) {
    const e = body.error!;
    // The server's own failure is not the caller's bad argument: it stays an internal error (-32603).
    if (e.code === "internal_error") throw new Error(`${def.name} failed while rendering a prompt: ${e.message}`);
    throw new InvalidPromptParams(e.code === "not_found" ? `Unknown ${what}: ${e.message}. ${e.hint}` : `${what}: ${e.message}. ${e.hint}`);
  }
  const { ok: _ok, ...rest } = body;
  return rest;
}

async function actorByRef(ctx: Ctx, ref: string): Promise<{ id: string; name: string; display_name: string }> {
  const value = ref.trim();
  const row = await dbOf(ctx)
    .select({ id: actors.id, name: actors.name, display_name: actors.displayName })
    .from(actors)
    .where(and(eq(actors.tenantId, ctx.tenantId), or(eq(actors.id, value === "me" ? ctx.actorId : value), eq(actors.name, value === "me" ? ctx.actorName : value))))
    .limit(1)
    .get();
  if (!row) throw new InvalidPromptParams(`Unknown actor '${excerpt(value, 80)}': no actor with that name or id in your tenant. actor_query lists them.`);
  return row;
}

async function taskByRef(ctx: Ctx, ref: string): Promise<Task> {
  try {
    return await findTask(ctx, ref);
  } catch (err) {
    if (err instanceof ToolError) throw new InvalidPromptParams(`Unknown task: ${err.message}. ${err.hint}`);
    throw err;
  }
}

const startSession: WorkflowPrompt = {
  name: "start_session",
  title: "Start a session on a project",
  description: "Orient on a project and pick up work: who you are, the project's brief, your inbox, ready tasks, and the change-ledger habits for the session",
  arguments: [{ name: "project", description: "The project's key (e.g. API)", required: true, completion: "project_key" }],
  async render(ctx, args) {
    const brief = await read(ctx, projectBriefTool, { project: args.project!.trim() }, "project");
    const project = brief.project as { key: string; title: string; status: string };
    const key = project.key;
    const counts = brief.task_counts as { by_status: Record<string, number>; ready: number; blocked: number };
    const open = Object.entries(counts.by_status)
      .filter(([s, n]) => n > 0 && s !== "done" && s !== "cancelled")
      .map(([s, n]) => `${n} ${s}`);
    const tasks = open.length ? `open tasks: ${open.join(", ")} (${counts.ready} ready, ${counts.blocked} blocked)` : "no open tasks";
    const instructions = [
      `Start a working session on project ${key} (${json(project.title)}, status ${project.status}; ${tasks}).`,
      "",
      "1. Call whoami first: it says who you are, your open tasks, your inbox and what changed since you were last seen.",
      `2. Read the project's brief (the next message, as you may see it now; ${step("project_brief", { project: key })} gives a fresh copy): status, top open tasks, recent decisions, knowledge notes and linked repositories.`,
      '3. Work your inbox before new work: inbox lists the handoffs, questions and reviews addressed to you. Act on each, then acknowledge it with inbox {"ack": [ids]}.',
      `4. Pick work. ${step("task_query", { project_id: key, state: "ready" })} lists open tasks whose dependencies are done; ${step("task_claim", { project_id: key })} claims the next ready one under a lease (or pass task_id for a specific task). Keep the fencing_token it returns and pass it to task_update, task_assign and task_release.`,
      `5. Before you redo research, ${step("knowledge_search", { q: "…", project_id: key })}; before you decide something, ${step("decision_query", { project_id: key, q: "…" })}. Record new decisions with decision_log and what you learn with knowledge_write.`,
      '6. Before you edit an entity (a column, a file, a function), call prior_attempts {"entity_path": …} and blame on it; after every meaningful change, call log_change with the entity_path, change_type, diff and your reasoning (why, not what), with one changeset_id for the whole task.',
      "7. When the work is delivered, task_code_ref records the commit, branch or pull request, and task_update moves the task to in_review or done (done waits for its acceptance criteria, evidence and reviewer).",
    ].join("\n");
    return [
      text(instructions),
      {
        role: "user",
        content: {
          type: "resource",
          resource: { uri: `ledger://project/${encodeURIComponent(key)}/brief`, mimeType: "application/json", text: embedded(brief, step("project_brief", { project: key })) },
        },
      },
    ];
  },
};

const prepareHandoff: WorkflowPrompt = {
  name: "prepare_handoff",
  title: "Prepare a handoff",
  description: "Hand a task over to another actor: bring its record up to date, then send a handoff that lets them continue without asking",
  arguments: [
    { name: "task", description: "The task to hand over: its reference (API-12) or id", required: true, completion: "open_task" },
    { name: "to_actor", description: "Who takes it over: an actor's name (external_ref) or id", required: true, completion: "actor" },
  ],
  async render(ctx, args) {
    const task = await taskByRef(ctx, args.task!);
    const to = await actorByRef(ctx, args.to_actor!);
    if (to.id === ctx.actorId) throw new InvalidPromptParams(`to_actor is you (${ctx.actorName}); name the actor who takes the task over.`);
    const ref = task.ref;
    const who = to.display_name && to.display_name !== to.name ? `${to.name} (${to.display_name})` : to.name;
    const open = task.acceptance_criteria.filter((c) => !c.met).map((c) => c.text);
    const closed = task.status === "done" || task.status === "cancelled";
    const lines = [
      `Prepare a handoff of task ${ref} ${json(task.title)} to ${who}.`,
      `The task is ${task.status}${task.assignee_actor_id === ctx.actorId ? ", assigned to you" : task.assignee_actor_id ? "" : ", unassigned"}${task.lease_expires_at ? `, leased until ${task.lease_expires_at}` : ""}.` +
        (closed ? " It is closed: make sure a handoff is what is needed (a follow-up task may fit better)." : ""),
      open.length > 0
        ? `Acceptance criteria not yet met:\n${open.map((c) => `- ${c}`).join("\n")}`
        : task.acceptance_criteria.length > 0
          ? "All acceptance criteria are met."
          : "The task has no acceptance criteria.",
      "",
      `1. Re-read the task: ${step("task_get", { task_id: ref })} gives its blockers, subtasks, comments, review standing and activity.`,
      `2. Bring the record up to date before you hand it on: log_change for every change not yet logged (with the task's changeset_id; ${step("changeset", { changeset_id: "…" })} shows what is logged), decision_log for decisions taken, knowledge_write for what you learned, task_code_ref for the commit, branch or pull request so far.`,
      `3. Send the handoff: ${step("handoff_create", { to_actor_ids: [to.name], kind: "handoff", title: `Take over ${ref}: ${task.title}`.slice(0, 300), related_task_id: ref, body: "…" })}. Write the body for someone starting cold: what is done, what is left (the criteria above), how to verify it, the risks and dead ends, the changeset_id and the branch or pull request.`,
      `4. Hand over the task itself if you hold it: ${step("task_assign", { task_id: ref, actor_id: to.name })} with the fencing_token your task_claim returned, or task_release if ${to.name} should claim it from the pool.`,
      "5. Watch your inbox for their questions; acknowledge each once you have answered it.",
    ];
    return [text(lines.join("\n"))];
  },
};

const reviewChange: WorkflowPrompt = {
  name: "review_change",
  title: "Review a change before logging it",
  description: "Before logging a change to an entity: check what was there, what was tried before and what governs it, then log the change with its reasoning",
  arguments: [
    { name: "entity_path", description: "The entity you changed or are about to change (users.email, src/auth.py::login)", required: true, completion: "entity_path" },
    { name: "changeset_id", description: "The changeset (feature or task slug) the change belongs to", completion: "changeset" },
  ],
  async render(ctx, args) {
    const path = canonicalPath(args.entity_path!);
    const changeset = args.changeset_id?.trim() || undefined;
    const [latest, attempts, feature] = await Promise.all([
      read(ctx, blameTool, { entity_path: path }, "entity_path"),
      read(ctx, priorAttemptsTool, { entity_path: path, limit: 10 }, "entity_path"),
      changeset ? read(ctx, changesetTool, { changeset_id: changeset, limit: 20 }, "changeset_id") : Promise.resolve(null),
    ]);
    const tried = (attempts.items as unknown[]).length;
    const logged = latest.status !== "no_history";
    const events = feature ? (feature.items as unknown[]).length : 0;
    const logArgs = { entity_path: path, change_type: "…", diff: "…", reasoning: "…", ...(changeset ? { changeset_id: changeset } : {}) };
    const steps = [
      logged
        ? "What is there now: the latest logged change (blame, below) with its reasoning and decision status. If a decision governs it (revisit_after, expires_when), respect it, or supersede it knowingly and say so."
        : `What is there now: nothing is logged for ${json(path)} yet, so this is its first logged change; check the spelling against change_diff on its parent path if you expected history.`,
      tried === 0
        ? "What was tried before: prior_attempts found no earlier attempt that was undone."
        : `What was tried before: prior_attempts found ${tried} earlier attempt(s) (below). Do not re-apply a change that was reverted or rejected unless you can say why it holds now; log such a re-attempt with change_type "supersede".`,
      `The wider history: ${step("change_diff", { entity_path: path })} lists every change to the entity and its dotted children, ${step("stale_decisions", { entity_path: path })} the decisions due for a revisit.`,
      ...(changeset
        ? [
            events > 0
              ? `The rest of the feature: changeset ${json(changeset)} so far (below); keep this change consistent with it.`
              : `The feature: changeset ${json(changeset)} has no logged change yet; this one starts it.`,
          ]
        : []),
      "Check the change itself: it does what the task needs and no more, and you can say why in a sentence or two.",
      `Then log it: ${step("log_change", logArgs)}. change_type is one of ${CHANGE_TYPES.join(", ")}; the reasoning says why, from your own context, not what the diff already shows.`,
    ];
    return [
      text([`Review the change to ${json(path)} before you log it.`, "", ...steps.map((s, i) => `${i + 1}. ${s}`)].join("\n")),
      ...(logged ? [text(`Latest change to ${path} (blame):\n${embedded(latest, step("blame", { entity_path: path }))}`)] : []),
      ...(tried > 0 ? [text(`Prior attempts on ${path} (prior_attempts):\n${embedded(attempts, step("prior_attempts", { entity_path: path }))}`)] : []),
      ...(events > 0 ? [text(`Changeset ${changeset} (changeset):\n${embedded(feature, step("changeset", { changeset_id: changeset }))}`)] : []),
    ];
  },
};

export const WORKFLOW_PROMPTS: readonly WorkflowPrompt[] = [startSession, prepareHandoff, reviewChange];

export const findWorkflowPrompt = (name: string): WorkflowPrompt | undefined => WORKFLOW_PROMPTS.find((p) => p.name === name);

const WORKFLOW_NAMES = new Set(WORKFLOW_PROMPTS.map((p) => p.name));

/** prompts/list: the workflow prompts, then the document store's (its built-ins, then its documents). */
export async function listAllPrompts(ctx: Ctx): Promise<Prompt[]> {
  const docs = await listDocsPrompts(ctx);
  return [
    ...WORKFLOW_PROMPTS.map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: a.required === true })),
    })),
    ...docs.filter((p) => !WORKFLOW_NAMES.has(p.name)),
  ];
}

/** Refuses unknown, missing and over-long arguments, naming what the prompt takes. */
function checkArguments(prompt: WorkflowPrompt, args: Record<string, string>): void {
  const known = new Set(prompt.arguments.map((a) => a.name));
  const unknown = Object.keys(args).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    throw new InvalidPromptParams(
      `Prompt '${prompt.name}' has no argument ${unknown
        .slice(0, 5)
        .map((k) => `'${excerpt(k, 40)}'`)
        .join(", ")}; it takes ${prompt.arguments.map((a) => a.name).join(", ")}.`,
    );
  }
  for (const a of prompt.arguments) {
    const v = args[a.name];
    if (typeof v !== "string" && v !== undefined) throw new InvalidPromptParams(`Argument '${a.name}' of prompt '${prompt.name}' must be a string.`);
    if (v !== undefined && v.length > MAX_PROMPT_ARGUMENT_CHARS) {
      throw new InvalidPromptParams(`Argument '${a.name}' of prompt '${prompt.name}' is ${v.length} characters; the limit is ${MAX_PROMPT_ARGUMENT_CHARS}.`);
    }
    if (a.required && (v === undefined || v.trim() === "")) throw new InvalidPromptParams(`Prompt '${prompt.name}' needs the argument '${a.name}': ${a.description}.`);
  }
}

/** prompts/get for any listed prompt. Throws {@link InvalidPromptParams} for every refusal. */
export async function getAnyPrompt(ctx: Ctx, name: string, args: Record<string, string> = {}): Promise<GetPromptResult> {
  const prompt = findWorkflowPrompt(name);
  if (prompt) {
    checkArguments(prompt, args);
    return { description: prompt.description, messages: await prompt.render(ctx, args) };
  }
  try {
    return (await getDocsPrompt(ctx, name, args)) as GetPromptResult;
  } catch (err) {
    // One error class leaves this module: the document store's -32602 refusals become ours.
    if (err instanceof ProtocolError && err.code === ProtocolErrorCode.InvalidParams) throw new InvalidPromptParams(err.message.replace(/^MCP error -?\d+: /, ""));
    throw err;
  }
}
