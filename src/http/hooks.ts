/**
 * Agent hook endpoints (docs/hooks.md): `POST /mcp/hooks/<client>` answers one agent client's hook
 * events in its own formats (Claude Code's `http` hooks post here directly; the command line's
 * `agent-ledger hook <client>` relays the command hooks of the others). Authenticated like /mcp (the OAuth provider checks the API key or token of everything
 * below /mcp) and rate limited with the caller's other calls.
 *
 * An agent must never be stopped by the ledger's own trouble: a body that cannot be read, a
 * throttled caller, an error or an answer later than the budget all answer `{}` with 200 (go on as
 * usual), and only a missing or revoked credential is refused (401, which the client reports
 * without blocking). Only a real finding (someone else's reservation) denies an edit.
 */
import { Hono } from "hono";
import { callerOf } from "../auth/caller";
import { systemClock } from "../core/time";
import type { Ctx } from "../core/context";
import type { Env } from "../env";
import { endsTurn, HOOK_CLIENTS, hookAdapter, hookSessionOf, type HookAnswer } from "../server/hooks";
import { joinClientSession } from "../work/runs/client-sessions";
import { readCapped } from "./body";
import { callerBuckets, charge, requestMeter } from "./rate-limit";

/** Hook events are small (a tool call's input at most); a larger body is not an event. */
export const MAX_HOOK_BODY_BYTES = 1024 * 1024;
/** Well inside the client's own time-out, so a slow ledger answers "go on" rather than time out. */
export const HOOK_BUDGET_MS = 4000;

type AppEnv = { Bindings: Env };
export const hookRoutes = new Hono<AppEnv>();

const GO_ON: HookAnswer = {};

hookRoutes.post("/:client", async (c) => {
  const client = c.req.param("client");
  const answer = hookAdapter(client);
  if (!answer)
    return c.json(
      {
        ok: false,
        error: {
          code: "not_found",
          message: `No hook endpoint for client '${client.slice(0, 40)}'.`,
          hint: `Hook endpoints: ${Object.keys(HOOK_CLIENTS)
            .map((name) => `/mcp/hooks/${name}`)
            .join(", ")} (docs/hooks.md).`,
          retryable: false,
        },
      },
      404,
    );
  const identity = await callerOf(c);
  if (!identity)
    return c.json(
      {
        ok: false,
        error: {
          code: "unauthorized",
          message: "This hook needs a live API key or OAuth token in the Authorization header.",
          hint: 'Set the hook\'s headers to { "Authorization": "Bearer $AGENT_LEDGER_KEY" } with AGENT_LEDGER_KEY in allowedEnvVars (docs/hooks.md).',
          retryable: false,
        },
      },
      401,
    );
  const buckets = callerBuckets(c.env, identity);
  const counted = await charge(c.env, buckets);
  if (counted.throttle) return c.json(GO_ON);
  const bytes = await readCapped(c.req.raw, MAX_HOOK_BODY_BYTES);
  let event: unknown;
  try {
    event = bytes ? JSON.parse(new TextDecoder().decode(bytes)) : null;
  } catch {
    event = null;
  }
  if (!event || typeof event !== "object" || Array.isArray(event)) return c.json(GO_ON);
  const ctx: Ctx = {
    env: c.env,
    d1: c.env.DB,
    tenantId: identity.tenantId,
    actorId: identity.actorId,
    actorName: identity.actorName,
    operator: identity.operator,
    sessionId: "",
    clock: systemClock,
    meter: requestMeter(c.env, buckets, counted),
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  };
  const onReserved = c.req.query("on_reserved") === "ask" ? "ask" : "deny";
  const repository = (c.req.query("repository") ?? "").slice(0, 200);
  const logChanges = c.req.query("log_changes") === "1";
  const holdAtStop = c.req.query("stop") !== "tell";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<HookAnswer>((resolve) => {
    timer = setTimeout(() => resolve(GO_ON), HOOK_BUDGET_MS);
  });
  const fields = event as Record<string, unknown>;
  const answered = async (): Promise<HookAnswer> => {
    const acting = await inClientSession(ctx, hookSessionOf(client, fields), logChanges, endsTurn(fields));
    return answer(acting, fields, { repository, onReserved, logChanges, holdAtStop });
  };
  try {
    return c.json(await Promise.race([answered(), late]));
  } catch (err) {
    console.warn("hook answered go-on after an error", err instanceof Error ? err.message : String(err));
    return c.json(GO_ON);
  } finally {
    clearTimeout(timer);
  }
});

/**
 * The hook's ctx inside the MCP session that carried the event's client session id (docs/hooks.md:
 * One run per session), so what it writes lands on the run the agent's tool calls use, and at a
 * turn's end that run's heartbeat is refreshed. Looked up only where the hook may write or it is a
 * turn's end: the events before an edit stay one lookup cheaper. No session found (or the lookup
 * failing): ctx as it was, and the writes carry the client's session id with no run.
 */
async function inClientSession(ctx: Ctx, clientSession: string, writes: boolean, turnEnd: boolean): Promise<Ctx> {
  if (!clientSession || (!writes && !turnEnd)) return ctx;
  try {
    const joined = await joinClientSession(ctx, clientSession);
    if (!joined) return ctx;
    if (turnEnd) await joined.heartbeat();
    return joined.ctx;
  } catch (err) {
    console.warn("hook acts outside the MCP session after an error", err instanceof Error ? err.message : String(err));
    return ctx;
  }
}
