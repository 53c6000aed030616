/**
 * What settles an MCP task (src/server/tasks): each kind of long work (an index job, a review
 * session, a conformance fixture) has a driver that reads what the task follows and says what the
 * task is now. Tasks are settled when they are read, not pushed: the work runs where it always ran
 * (a Workflow, a Durable Object's alarms), and a poll costs one read of it.
 */
import type { Ctx } from "./context";

/** A task as a resource: read it for the task as tasks/get answers it, subscribe to hear it move. */
export const taskResourceUri = (taskId: string) => `ledger://tasks/${taskId}`;

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** What a driver sees of a task. */
export interface TaskView {
  id: string;
  tool: string;
  status: TaskStatus;
  createdAt: string;
  /** The requests still waiting for the client (JSON), when input_required. */
  inputRequests: string;
}

/** What a driver changes of a task: its status and what goes with it. */
export interface TaskChange {
  status?: TaskStatus;
  statusMessage?: string;
  /** The requests still waiting for the client, by key; {} when none. */
  inputRequests?: Record<string, unknown>;
  /** The tool's result (a CallToolResult), for completed; a failure of the work is a result with isError. */
  result?: unknown;
  /** A protocol error ({code, message, data?}), for failed: the server could not run the work at all. */
  error?: { code: number; message: string; data?: unknown };
  /** The driver's own JSON, when what it follows moved on (answers gathered so far). */
  link?: Record<string, unknown>;
}

export interface TaskDriver {
  /** The task's state now, from what it follows; undefined when nothing moved. Only live tasks are settled. */
  settle(ctx: Ctx, task: TaskView, link: Record<string, unknown>): Promise<TaskChange | undefined>;
  /**
   * Answers to some of the task's pending input requests (tasks/update), only keys it waits for:
   * the change they make. A driver whose tasks never ask has no answer().
   */
  answer?(ctx: Ctx, task: TaskView, link: Record<string, unknown>, responses: Record<string, unknown>): Promise<TaskChange | undefined>;
  /** After an answer's change is stored: picks the work up again (a background run is queued anew). */
  resume?(ctx: Ctx, task: TaskView): Promise<void>;
  /** Stops the work the task follows, where it can be stopped; the task is cancelled whatever this does. */
  cancel?(ctx: Ctx, task: TaskView, link: Record<string, unknown>): Promise<void>;
}

/** The drivers a server knows, by the name a task row records. */
export type TaskDrivers = ReadonlyMap<string, TaskDriver>;

/**
 * How a tool is answered as a task. A tool that starts long work elsewhere names the driver that
 * follows it and what it follows; a tool whose call is itself the long work runs in the background
 * (the tool-tasks queue, src/server/tasks/background.ts) and its answer is the task's result.
 */
export type ToolTask<Out> =
  | {
      driver: string;
      /** What the task follows, from the call's answer (its job id, its session id). */
      link(output: Out): Record<string, unknown>;
      /** How often a client should poll. */
      pollMs: number;
    }
  | {
      background: true;
      pollMs: number;
      /** Which calls are long enough to be tasks (the raw arguments); absent: every call. Others are answered at once. */
      when?(args: Record<string, unknown>): boolean;
    };
