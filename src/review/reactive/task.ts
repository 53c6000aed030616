/**
 * reactive_review_pr as an MCP task: the task follows its review session. The result of a
 * finished review is what get_review_status answers for it; a failed review is a completed task
 * whose result is the failure; a session a newer head replaced ends the task as cancelled.
 */
import { callTool, failureResult } from "../../core/call";
import { ToolError } from "../../core/errors";
import type { TaskDriver } from "../../core/task-driver";
import { reviewSessionStub } from "../reactive-sessions/runner";
import { getReviewStatusTool } from "./status";

export const REVIEW_TASK_DRIVER = "review.session";

/** To a client that declares the tasks extension, a started review is answered as a task that follows its session. */
export const REVIEW_TASK = { driver: REVIEW_TASK_DRIVER, link: (r: { session_id: string }) => ({ session_id: r.session_id }), pollMs: 5000 };

interface Session {
  status: string;
  current_step: number | null;
  total_steps: number;
  error: string | null;
}

const sessionIdOf = (link: Record<string, unknown>) => String(link.session_id);

export const reviewTaskDriver: TaskDriver = {
  async settle(ctx, _task, link) {
    const id = sessionIdOf(link);
    const status = await callTool(getReviewStatusTool, ctx, { session_id: id });
    // The session's row is gone or unreadable: the review cannot be followed any further.
    if (status.isError) return { status: "completed", statusMessage: "", result: status };
    const session = (status.structuredContent as { session: Session }).session;
    switch (session.status) {
      case "executing":
        return { statusMessage: `reviewing: step ${session.current_step ?? session.total_steps} of ${session.total_steps}` };
      case "paused":
        return { statusMessage: `paused at step ${session.current_step ?? "?"} of ${session.total_steps}: resume_review continues it` };
      case "completed":
        return { status: "completed", statusMessage: "", result: status };
      case "cancelled":
        return { status: "cancelled", statusMessage: session.error ?? "The review was cancelled." };
      default:
        return {
          status: "completed",
          statusMessage: "",
          result: failureResult(
            new ToolError("review_failed", `Review session ${id} failed: ${session.error ?? "no reason recorded"}`, {
              hint: "get_review_telemetry shows each step's attempts; reactive_review_pr starts a new review.",
              retryable: true,
            }),
          ),
        };
    }
  },
  async cancel(ctx, _task, link) {
    await reviewSessionStub(ctx.env, ctx.tenantId, sessionIdOf(link)).cancel("Cancelled by its MCP task.");
  },
};
