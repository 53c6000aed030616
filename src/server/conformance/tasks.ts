/**
 * The conformance suite's task fixtures (the tasks extension, SEP-2663): a sync greeting beside
 * tools that run as tasks. Their "work" is a deadline or a question, kept in the task's link and
 * settled by one driver when the task is read, so a fixture task is as durable as a real one.
 */
import { inputRequired, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { TaskChange, TaskDriver } from "../../core/task-driver";
import { invalidInput } from "../../core/errors";
import { type FixtureTool, NO_ARGS, text } from "./fixture";
import { answered, ask } from "./input-required";

export const FIXTURE_TASK_DRIVER = "conformance.fixture";

/** Each fixture task's plan: when it settles and how. */
type Link =
  | { kind: "sleep"; dueAt: number; seconds: number; label: string }
  | { kind: "tool_error"; dueAt: number }
  | { kind: "protocol_error"; dueAt: number }
  | { kind: "greet_later"; dueAt: number; name: string }
  | { kind: "confirm"; filename: string; answers: Record<string, unknown> }
  | { kind: "multi"; answers: Record<string, unknown> };

/** Sync sleeps are capped: a client that did not ask for a task still gets its answer in time. */
const MAX_SYNC_SECONDS = 5;
const POLL_MS = 200;

function secondsOf(args: Record<string, unknown>): number {
  const s = args.seconds ?? 0;
  if (typeof s !== "number" || !Number.isFinite(s) || s < 0 || s > 3600) throw invalidInput("seconds must be a number from 0 to 3600.", "Pass seconds, e.g. 2.");
  return s;
}

const labelOf = (args: Record<string, unknown>) => (typeof args.label === "string" ? args.label.slice(0, 200) : "");
const later = (ms: number) => Date.now() + ms;
const plan = (link: Link, rest: { status?: "input_required"; inputRequests?: Record<string, unknown> } = {}) => ({ driver: FIXTURE_TASK_DRIVER, link, pollMs: POLL_MS, ...rest });
const done = (result: Record<string, unknown>): TaskChange => ({ status: "completed", statusMessage: "", result });
const CONFIRM = (filename: string) => ask(`Delete ${filename}?`, "confirm", "boolean");

export const TASK_TOOLS: FixtureTool[] = [
  {
    tool: { name: "greet", description: "Sync-only: says hello", inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    call: async ({ args }) => ({ content: [text(`Hello, ${typeof args.name === "string" ? args.name : "stranger"}!`)] }),
  },
  {
    tool: {
      name: "slow_compute",
      description: "Task-supporting: sleeps `seconds`, then answers",
      inputSchema: { type: "object", properties: { seconds: { type: "number" }, label: { type: "string" } } },
    },
    call: async ({ args }) => {
      const seconds = Math.min(secondsOf(args), MAX_SYNC_SECONDS);
      await new Promise((r) => setTimeout(r, seconds * 1000));
      return { content: [text(`Computed ${labelOf(args) || "result"} after ${seconds}s.`)] };
    },
    task: {
      support: "optional",
      plan: async ({ args }) => {
        const seconds = secondsOf(args);
        return plan({ kind: "sleep", dueAt: later(seconds * 1000), seconds, label: labelOf(args) });
      },
    },
  },
  {
    tool: { name: "failing_job", description: "Task-required: reports a tool error after about a second", inputSchema: NO_ARGS },
    call: async () => ({ content: [text("failing_job failed: the job reported an error.")], isError: true }),
    task: { support: "required", plan: async () => plan({ kind: "tool_error", dueAt: later(1000) }) },
  },
  {
    tool: { name: "protocol_error_job", description: "Task-supporting: fails with a protocol error", inputSchema: NO_ARGS },
    call: async () => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, "protocol_error_job crashed.");
    },
    task: { support: "optional", plan: async () => plan({ kind: "protocol_error", dueAt: later(300) }) },
  },
  {
    tool: { name: "confirm_delete", description: "Task-required: asks to confirm, then answers", inputSchema: { type: "object", properties: { filename: { type: "string" } } } },
    call: async () => ({ content: [text("confirm_delete runs as a task only.")], isError: true }),
    task: {
      support: "required",
      plan: async ({ args }) => {
        const filename = typeof args.filename === "string" ? args.filename.slice(0, 200) : "file";
        return plan({ kind: "confirm", filename, answers: {} }, { status: "input_required", inputRequests: { confirm: CONFIRM(filename) } });
      },
    },
  },
  {
    tool: { name: "multi_input", description: "Task-required: asks two questions at once", inputSchema: NO_ARGS },
    call: async () => ({ content: [text("multi_input runs as a task only.")], isError: true }),
    task: {
      support: "required",
      plan: async () =>
        plan({ kind: "multi", answers: {} }, { status: "input_required", inputRequests: { first: ask("First: your name?", "name"), second: ask("Second: confirm?", "confirm", "boolean") } }),
    },
  },
  {
    tool: { name: "test_tool_with_task", description: "Task-required: asks a name (input_required), then greets it from a task", inputSchema: NO_ARGS },
    call: async () => ({ content: [text("test_tool_with_task runs as a task only.")], isError: true }),
    task: {
      support: "required",
      plan: async (call) => {
        const name = answered(call, "user_name", "name");
        if (typeof name !== "string") return inputRequired({ inputRequests: { user_name: ask("What is your name?", "name") } });
        return plan({ kind: "greet_later", dueAt: later(300), name: name.slice(0, 200) });
      },
    },
  },
];

const accepted = (response: unknown): Record<string, unknown> | undefined => {
  const r = response as { action?: unknown; content?: unknown } | null;
  return r && r.action === "accept" && typeof r.content === "object" && r.content !== null ? (r.content as Record<string, unknown>) : undefined;
};

export const fixtureTaskDriver: TaskDriver = {
  async settle(_ctx, _task, raw) {
    const link = raw as Link;
    if (!("dueAt" in link)) return undefined;
    if (Date.now() < link.dueAt) return { statusMessage: `due in ${Math.ceil((link.dueAt - Date.now()) / 1000)}s` };
    switch (link.kind) {
      case "sleep":
        return done({ content: [text(`Computed ${link.label || "result"} after ${link.seconds}s.`)] });
      case "tool_error":
        return done({ content: [text("failing_job failed: the job reported an error.")], isError: true });
      case "protocol_error":
        return { status: "failed", error: { code: ProtocolErrorCode.InternalError, message: "protocol_error_job crashed." } };
      case "greet_later":
        return done({ content: [text(`Hello, ${link.name}!`)] });
    }
  },
  async answer(_ctx, task, raw, responses) {
    const link = raw as Link;
    if (link.kind !== "confirm" && link.kind !== "multi") return undefined;
    const answers = { ...link.answers, ...responses };
    const pending = Object.fromEntries(Object.entries(JSON.parse(task.inputRequests) as Record<string, unknown>).filter(([key]) => !Object.hasOwn(responses, key)));
    if (Object.keys(pending).length > 0) return { inputRequests: pending, link: { ...link, answers } };
    if (link.kind === "confirm") {
      const yes = accepted(answers.confirm)?.confirm === true;
      return { ...done({ content: [text(yes ? `Deleted ${link.filename}.` : `Kept ${link.filename}.`)] }), inputRequests: {} };
    }
    const names = Object.values(answers).map((a) => {
      const content = accepted(a);
      if (!content) return "(declined)";
      return typeof content.name === "string" ? content.name : `confirm=${String(content.confirm)}`;
    });
    return { ...done({ content: [text(`Got: ${names.join(", ")}.`)] }), inputRequests: {} };
  },
};
