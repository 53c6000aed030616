import { runMaintenance } from "./cron/maintenance";
import { DOC_INDEX_QUEUE, handleIndexBatch } from "./docs/store/index-queue";
import { edge } from "./edge";
import { TIMINGS_HEADER, withTimings } from "./core/timing";
import { handleOutboundBatch, OUTBOUND_HOOKS_QUEUE } from "./work/outhooks/send";
import type { Env } from "./env";
import { refuseMisplacedFixtures } from "./server/conformance/setting";
import { handleToolTaskBatch, TOOL_TASKS_QUEUE, type ToolTaskMessage } from "./server/tasks/background";
import { findTool } from "./server/registry";
import { queuedMeter } from "./http/rate-limit";

export { ClaimsDO } from "./durable/claims";
export { DocSessionDO } from "./durable/doc-sessions";
export { InboxDO } from "./durable/inbox";
export { RateLimitDO } from "./durable/rate-limit";
export { ReviewSessionDO } from "./durable/review-sessions";
export { SessionDO } from "./durable/session";
export { CodeIndexWorkflow } from "./code/workflow";

export default {
  // With BENCH_ROUTES=1 (benchmarks only), a request that asks is answered with Server-Timing:
  // where its time went. Only when asked, because keeping the record costs every request CPU.
  fetch: (request: Request, env: Env, ctx: ExecutionContext) =>
    refuseMisplacedFixtures(request, env) ?? withTimings(env.BENCH_ROUTES === "1" && request.headers.has(TIMINGS_HEADER), async () => edge.fetch(request, env, ctx)),
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runMaintenance(env, new Date(controller.scheduledTime), controller.cron));
  },
  async queue(batch, env, ctx) {
    if (batch.queue === DOC_INDEX_QUEUE) return handleIndexBatch(batch, env, ctx);
    if (batch.queue === OUTBOUND_HOOKS_QUEUE) return handleOutboundBatch(batch, env);
    if (batch.queue === TOOL_TASKS_QUEUE) return handleToolTaskBatch(batch as MessageBatch<ToolTaskMessage>, env, ctx, { findTool, meterOf: queuedMeter });
    console.error(`[queue] no consumer for queue ${batch.queue}; its ${batch.messages.length} message(s) are retried`);
    batch.retryAll();
  },
} satisfies ExportedHandler<Env>;
