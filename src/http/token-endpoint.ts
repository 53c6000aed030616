/**
 * POST /oauth/token, in front of the provider: a refresh goes through reuse detection
 * (src/auth/refresh-rotation.ts); every other request passes on unchanged. The provider still
 * authenticates the client, checks the grant and issues the tokens.
 */
import { MAX_TOKEN_BODY_BYTES } from "../auth/cimd-guard";
import { endGrantEverywhere } from "../auth/oauth";
import { GRANT_ENDED } from "../auth/oauth-grants";
import { judgeRefresh, presentedRefresh, recordRotation, spendSuccessor, type PresentedRefresh } from "../auth/refresh-rotation";
import { sha256Hex } from "../db/ids";
import type { Env } from "../env";
import { readCapped } from "./body";

type Forward = (request: Request) => Promise<Response>;

const isForm = (request: Request) => (request.headers.get("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";

/** An RFC 6749 §5.2 error, shaped and cached as the provider's own, readable cross-origin as the provider's are. */
function tokenError(request: Request, status: number, error: string, description: string): Response {
  const headers = new Headers({ "Content-Type": "application/json", "Cache-Control": "no-store", Pragma: "no-cache" });
  const origin = request.headers.get("Origin");
  if (origin) {
    headers.set("Access-Control-Allow-Origin", origin);
    headers.set("Vary", "Origin");
  }
  return new Response(JSON.stringify({ error, error_description: description }), { status, headers });
}

async function errorCode(res: Response): Promise<string | undefined> {
  try {
    return ((await res.clone().json()) as { error?: string }).error;
  } catch {
    return undefined;
  }
}

export async function tokenEndpoint(request: Request, env: Env, forward: Forward): Promise<Response> {
  if (request.method !== "POST" || !isForm(request)) return forward(request);
  const body = await readCapped(request, MAX_TOKEN_BODY_BYTES);
  if (!body) return tokenError(request, 413, "invalid_request", `A token request may be at most ${MAX_TOKEN_BODY_BYTES / 1024} KiB.`);
  const again = new Request(request.url, { method: "POST", headers: request.headers, body });
  const form = new URLSearchParams(new TextDecoder().decode(body));
  const token = form.get("refresh_token");
  const presented = form.get("grant_type") === "refresh_token" && token ? await presentedRefresh(token) : null;
  return presented ? refresh(again, env, presented, forward) : forward(again);
}

async function refresh(request: Request, env: Env, presented: PresentedRefresh, forward: Forward): Promise<Response> {
  const now = new Date();
  const reused = async () => {
    console.warn(`[oauth] refresh token reuse on grant ${presented.grantId}: the grant is ended`);
    await endGrantEverywhere(env, presented.grantId, presented.userId, GRANT_ENDED.refreshReuse, now);
    return tokenError(request, 400, "invalid_grant", "This refresh token was already used, so the grant is ended (its tokens stop working). Sign in again.");
  };
  const verdict = await judgeRefresh(env.DB, presented, now);
  if (verdict.kind === "reuse") return reused();
  const res = await forward(request);
  if (res.status !== 200) {
    // A rotated-out token the provider no longer takes (its successor has been used since) is reuse too.
    return verdict.kind === "retry" && (await errorCode(res)) === "invalid_grant" ? reused() : res;
  }
  const issued = ((await res.clone().json()) as { refresh_token?: unknown }).refresh_token;
  if (typeof issued !== "string") return res;
  const issuedId = await sha256Hex(issued);
  if (verdict.kind === "retry") {
    await spendSuccessor(env.DB, presented, verdict.successorId, issuedId, now);
    return res;
  }
  return (await recordRotation(env.DB, presented, issuedId, now)) === "reuse" ? reused() : res;
}
