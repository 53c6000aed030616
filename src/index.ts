import { runMaintenance } from "./cron/maintenance";
import { edge } from "./edge";
import type { Env } from "./env";

export { ClaimsDO } from "./durable/claims";
export { DocSessionDO } from "./durable/doc-sessions";
export { RateLimitDO } from "./durable/rate-limit";
export { ReviewSessionDO } from "./durable/review-sessions";
export { SessionDO } from "./durable/session";
export { CodeIndexWorkflow } from "./code/workflow";

export default {
  fetch: edge.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runMaintenance(env, new Date(controller.scheduledTime), controller.cron));
  },
} satisfies ExportedHandler<Env>;
