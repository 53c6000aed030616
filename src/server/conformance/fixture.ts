/** What every conformance fixture is: a listed tool and its answer from the request alone. */
import type { CallToolResult, InputRequiredResult, ServerContext, Tool } from "@modelcontextprotocol/server";
import type { TaskPlan } from "../tasks/start";

/** What a fixture seals into its request state: its own name first, so state cannot move between fixtures. */
export interface FixtureState {
  tool: string;
  kind: string;
  round?: number;
  name?: string;
}

/** What a fixture tool's call can use of the request beyond its arguments. */
export interface FixtureCall {
  args: Record<string, unknown>;
  sctx: ServerContext;
  /** Seals state with this server's request-state codec (bound to the caller, expiring). */
  mint(state: FixtureState): Promise<string>;
  /** What this call may ask its client mid-call: a 2025 session's declared capabilities, relayed on the call's stream. */
  asks: { elicitation: boolean; sampling: boolean };
}

/** A fixture that is answered as an MCP task when the client declares the tasks extension (../tasks). */
export interface FixtureTask {
  /** required: a call without the extension is refused with -32021 before the fixture runs. */
  support: "optional" | "required";
  /** The task this call starts, or (a fixture that gathers input first) its input_required answer. */
  plan(call: FixtureCall): Promise<TaskPlan | InputRequiredResult>;
}

export interface FixtureTool {
  tool: Tool;
  task?: FixtureTask;
  call(call: FixtureCall): Promise<CallToolResult | InputRequiredResult>;
  /** On the 2025 revisions its notifications need the call's stream even when no progress was asked for. */
  streams?: boolean;
}

export const NO_ARGS = { type: "object", properties: {} } as const;
export const text = (t: string) => ({ type: "text" as const, text: t });
