/**
 * The switch for the conformance fixtures: the MCP conformance suite's reference tools, prompts and
 * resources, served beside the real ones so every scenario runs on this server's own transport,
 * registry, input_required and session code. Only the conformance run sets it (test/conformance), on
 * a local `wrangler dev`. The caller's address tells local from deployed: Cloudflare sets
 * CF-Connecting-IP to the client's public address on every request, and the local runtime sets the
 * socket's, so only a caller on this machine is on loopback. A Worker with the setting on that gets a
 * request from anywhere else (a deployment), or with a value other than "1", answers nothing but the
 * refusal: fixtures that echo, elicit and sample on request have no place beside a team's data.
 */
import { isLoopbackHost } from "../../auth/oauth";
import type { Env } from "../../env";

type Setting = Pick<Env, "CONFORMANCE_FIXTURES">;

const isSet = (env: Setting) => env.CONFORMANCE_FIXTURES !== undefined && env.CONFORMANCE_FIXTURES !== "" && env.CONFORMANCE_FIXTURES !== "0";

/** A loopback address as the runtime writes it: 127.x.x.x, ::1, or 127.x.x.x mapped into IPv6. */
const isLoopbackAddress = (ip: string | null) => ip !== null && (ip === "::1" || isLoopbackHost(ip.startsWith("::ffff:") ? ip.slice("::ffff:".length) : ip));

/** Whether this request is served the fixtures: the setting is "1" and the caller is on this machine. */
export const fixturesServed = (env: Setting, request: Request): boolean => env.CONFORMANCE_FIXTURES === "1" && isLoopbackAddress(request.headers.get("CF-Connecting-IP"));

/** The answer to every request of a Worker whose setting is on where it may not be, or null. */
export function refuseMisplacedFixtures(request: Request, env: Setting): Response | null {
  if (!isSet(env) || fixturesServed(env, request)) return null;
  return Response.json(
    {
      error: {
        code: "misconfigured",
        message: "This Worker will not serve: CONFORMANCE_FIXTURES is set, and the conformance fixtures run only on a local server, called from the same machine.",
        hint: "Remove CONFORMANCE_FIXTURES from this deployment's vars and secrets (wrangler secret delete CONFORMANCE_FIXTURES); only npm run test:conformance sets it.",
        retryable: false,
      },
    },
    { status: 503 },
  );
}
