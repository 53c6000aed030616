/**
 * Tools whose call is itself the long work (execute_plan) run as background tasks: tools/call
 * validates the arguments, writes the task and queues it; the tool-tasks queue's consumer runs the
 * call through the same pipeline as a request would (with the caller's identity and surface) and
 * stores its answer as the task's result. A confirmation the tool asks for parks the task in
 * input_required; the client's answer (tasks/update) queues the run again, which finds it.
 */
import { inputRequired, ProtocolErrorCode, type CallToolResult } from "@modelcontextprotocol/server";
import type { Ctx, Surface } from "../../core/context";
import { argumentsRefusal, callTool } from "../../core/call";
import { answerOfForm, CANNOT_ASK, confirmationForm, InputNeeded } from "../../core/confirm";
import type { Confirmer } from "../../core/confirmer";
import type { AnyToolDef } from "../../core/define-tool";
import type { Meter, MeterSeed } from "../../core/meter";
import type { TaskDriver, TaskView } from "../../core/task-driver";
import { systemClock } from "../../core/time";
import type { Env } from "../../env";
import { changeTask, createTask, findTask } from "./store";
import { createTaskResult, TASK_TTL_MS } from "./wire";

export const TOOL_TASKS_QUEUE = "agent-ledger-tool-tasks";
export const BACKGROUND_TASK_DRIVER = "tool.background";

export interface ToolTaskMessage {
  tenantId: string;
  actorId: string;
  taskId: string;
}

/** What a background run needs of the call that queued it. */
interface Link {
  args: Record<string, unknown>;
  actorName: string;
  operator: boolean;
  surface?: Surface;
  /** The client declared form elicitation: a confirmation is asked through the task, else `confirm: true` stands for it. */
  canAsk: boolean;
  /** Confirmations answered so far, by key. */
  answers: Record<string, "accepted" | "declined">;
  /** The request's rate-limit counters: the run charges what its call costs beyond the request's unit. */
  meter?: MeterSeed;
}

/** What the consumer needs from the layers above: the tools, and a meter for the request's counters. */
export interface BackgroundRunner {
  findTool(name: string): AnyToolDef | undefined;
  meterOf(env: Env, seed: MeterSeed): Meter;
}

const queued = (ctx: Pick<Ctx, "env" | "tenantId" | "actorId">, taskId: string) => ctx.env.TOOL_TASKS.send({ tenantId: ctx.tenantId, actorId: ctx.actorId, taskId } satisfies ToolTaskMessage);

/** tools/call's answer for a background tool: bad arguments are refused now; otherwise the queued task. */
export async function startBackgroundTask(ctx: Ctx, def: AnyToolDef, args: Record<string, unknown>, canAsk: boolean, pollMs: number): Promise<CallToolResult> {
  const refusal = argumentsRefusal(def, args);
  if (refusal) return refusal;
  const meter = ctx.meter?.seed?.();
  const link: Link = { args, actorName: ctx.actorName, operator: ctx.operator, ...(ctx.surface ? { surface: ctx.surface } : {}), canAsk, answers: {}, ...(meter ? { meter } : {}) };
  let row = await createTask(ctx, { tool: def.name, driver: BACKGROUND_TASK_DRIVER, link: { ...link }, pollMs, ttlMs: TASK_TTL_MS });
  try {
    await queued(ctx, row.id);
  } catch (err) {
    console.error(`could not queue task ${row.id}`, err);
    row = await changeTask(ctx, row, { status: "failed", error: { code: ProtocolErrorCode.InternalError, message: "The task could not be queued; nothing ran. Call the tool again." } });
  }
  return createTaskResult(row) as unknown as CallToolResult;
}

function confirmerOf(link: Link): Confirmer {
  if (!link.canAsk) return CANNOT_ASK;
  return { answer: (key) => link.answers[key] ?? "unanswered" };
}

/** The task owner's context, before the task's link says more of the caller. */
const ownerCtx = (env: Env, message: ToolTaskMessage, waitUntil: (p: Promise<unknown>) => void): Ctx => ({
  env,
  d1: env.DB,
  tenantId: message.tenantId,
  actorId: message.actorId,
  actorName: "",
  operator: false,
  sessionId: "",
  clock: systemClock,
  waitUntil,
});

/** Runs one queued task's call, if the task still waits for it. */
async function runQueued(env: Env, waitUntil: (p: Promise<unknown>) => void, message: ToolTaskMessage, runner: BackgroundRunner): Promise<void> {
  const base = ownerCtx(env, message, waitUntil);
  const row = await findTask(base, message.taskId);
  // Cancelled, expired, already run (a redelivered message), or waiting for an answer: nothing to do.
  if (!row || row.status !== "working") return;
  const link = JSON.parse(row.link) as Link;
  const ctx: Ctx = {
    ...base,
    actorName: link.actorName,
    operator: link.operator,
    sessionId: "",
    ...(link.surface ? { surface: link.surface } : {}),
    ...(link.meter ? { meter: runner.meterOf(env, link.meter) } : {}),
    confirmer: confirmerOf(link),
  };
  const def = runner.findTool(row.tool);
  if (!def) {
    await changeTask(ctx, row, { status: "failed", error: { code: ProtocolErrorCode.InternalError, message: `This server has no tool '${row.tool}' any more.` } });
    return;
  }
  try {
    const result = await callTool(def, ctx, link.args);
    // The guard in changeTask drops the answer of a run cancelled meanwhile.
    await changeTask(ctx, row, { status: "completed", statusMessage: "", result });
  } catch (err) {
    if (!(err instanceof InputNeeded)) throw err;
    const { key, message: question } = err.confirmation;
    await changeTask(ctx, row, {
      status: "input_required",
      statusMessage: question,
      inputRequests: { [key]: inputRequired.elicit({ message: question, requestedSchema: confirmationForm(question) }) },
    });
  }
}

/** Runs of a message before its task is given up as failed: the consumer's max_retries in wrangler.toml, plus the first. */
const MAX_ATTEMPTS = 4;

/**
 * The tool-tasks queue's consumer. A run that throws (the tool's own failures are results, so this
 * is the platform failing) is retried by the queue; the last attempt ends its task as failed, so a
 * client polling it is told rather than left waiting for the task's whole ttl.
 */
export async function handleToolTaskBatch(batch: MessageBatch<ToolTaskMessage>, env: Env, ectx: ExecutionContext, runner: BackgroundRunner): Promise<void> {
  for (const message of batch.messages) {
    try {
      await runQueued(env, (p) => ectx.waitUntil(p), message.body, runner);
      message.ack();
    } catch (err) {
      console.error(`background task ${message.body.taskId} failed (attempt ${message.attempts})`, err);
      if (message.attempts < MAX_ATTEMPTS) {
        message.retry();
        continue;
      }
      await giveUp(env, message.body).catch((e) => console.error(`could not mark task ${message.body.taskId} failed`, e));
      message.ack();
    }
  }
}

async function giveUp(env: Env, message: ToolTaskMessage): Promise<void> {
  const ctx = ownerCtx(env, message, () => undefined);
  const row = await findTask(ctx, message.taskId);
  if (row?.status !== "working") return;
  await changeTask(ctx, row, { status: "failed", error: { code: ProtocolErrorCode.InternalError, message: `The run failed ${MAX_ATTEMPTS} times; nothing more will be tried. Call the tool again.` } });
}

/** The driver of background tasks: their runs write their own state; an answer is recorded and the run queued again. */
export const backgroundTaskDriver: TaskDriver = {
  async settle() {
    return undefined;
  },
  async answer(_ctx, _task, raw, responses) {
    const link = raw as unknown as Link;
    const answers = { ...link.answers };
    for (const [key, response] of Object.entries(responses)) {
      const r = response as { action?: unknown; content?: unknown } | null;
      answers[key] = answerOfForm(typeof r?.action === "string" ? r.action : "decline", (r?.content ?? undefined) as Record<string, unknown> | undefined);
    }
    return { status: "working", statusMessage: "", inputRequests: {}, link: { ...link, answers } };
  },
  async resume(ctx, task: TaskView) {
    await queued(ctx, task.id);
  },
};
