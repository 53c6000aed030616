import { app } from "./app";
import type { Env } from "./env";

export { SessionDO } from "./durable/session";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
