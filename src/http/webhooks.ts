/**
 * POST /webhooks/github (a GitHub App: the Worker secret GITHUB_WEBHOOK_SECRET, the tenant found
 * from the installation) and POST /webhooks/github/{tenant} (a tenant's own repository webhooks,
 * signed with that tenant's secret). Order matters: size, then signature, then parsing; only a
 * verified, well-formed delivery is stored, and it is acknowledged before it is processed, because
 * GitHub gives up after 10 seconds.
 */
import { verify } from "@octokit/webhooks-methods";
import { Hono, type Context } from "hono";
import { SLUG } from "../auth/provision";
import { decryptToken } from "../git/credentials";
import { processDelivery, recordDelivery } from "../git/webhooks";
import type { Env } from "../env";
import { declaredTooLarge, MAX_WEBHOOK_BODY_BYTES, mebibytes, readCapped } from "./body";

type C = Context<{ Bindings: Env }>;

/** The envelope every refusal here answers with; `hint` says what the sender (GitHub, or an operator) can do. */
function fail(c: C, status: 400 | 401 | 413, code: string, message: string, hint: string) {
  return c.json({ ok: false, error: { code, message, hint, retryable: false } }, status);
}

const tooLarge = (c: C) => fail(c, 413, "payload_too_large", `Webhook bodies are limited to ${MAX_WEBHOOK_BODY_BYTES} bytes (${mebibytes(MAX_WEBHOOK_BODY_BYTES)}), GitHub's own cap.`,
  "GitHub never sends more than this; check what is posting to this URL.");

async function validSignature(secret: string | null, body: string, signature: string | undefined): Promise<boolean> {
  if (!secret || !body || !signature) return false;
  try {
    return await verify(secret, body, signature);
  } catch {
    return false;
  }
}

/** The tenant's own webhook secret; null for an unknown tenant or one without a secret, alike (no existence oracle). */
async function tenantSecret(env: Env, slug: string): Promise<{ tenantId: string; secret: string } | null> {
  if (!SLUG.test(slug) || !env.GITHUB_CREDENTIALS_KEY) return null;
  const row = await env.DB.prepare(`SELECT t.id AS tenant_id, s.secret FROM tenants t JOIN github_webhook_secrets s ON s.tenant_id = t.id WHERE t.slug = ?`)
    .bind(slug).first<{ tenant_id: string; secret: string }>();
  if (!row) return null;
  try {
    return { tenantId: row.tenant_id, secret: await decryptToken(row.secret, row.tenant_id, env.GITHUB_CREDENTIALS_KEY) };
  } catch {
    return null;
  }
}

/** The tenant whose App installation sent the delivery, or "" when none has claimed it. */
async function installationTenant(env: Env, payload: Record<string, unknown>): Promise<string> {
  const id = (payload.installation as { id?: unknown } | undefined)?.id;
  if (typeof id !== "number" || !Number.isSafeInteger(id)) return "";
  const row = await env.DB.prepare(`SELECT tenant_id FROM github_credentials WHERE kind = 'app' AND installation_id = ?`).bind(String(id)).first<{ tenant_id: string }>();
  return row?.tenant_id ?? "";
}

async function receive(c: C, secretFor: () => Promise<{ tenantId: string | null; secret: string | null }>): Promise<Response> {
  if (declaredTooLarge(c.req.raw, MAX_WEBHOOK_BODY_BYTES)) return tooLarge(c);
  const bytes = await readCapped(c.req.raw, MAX_WEBHOOK_BODY_BYTES);
  if (bytes === null) return tooLarge(c);
  const body = new TextDecoder().decode(bytes);
  const { tenantId, secret } = await secretFor();
  if (!(await validSignature(secret, body, c.req.header("x-hub-signature-256")))) {
    return fail(c, 401, "bad_signature", "Missing or invalid X-Hub-Signature-256.", "Sign the raw body with the webhook's secret (HMAC-SHA256); the App URL uses GITHUB_WEBHOOK_SECRET, a tenant URL that tenant's own secret.");
  }

  const event = c.req.header("x-github-event") ?? "";
  const deliveryId = c.req.header("x-github-delivery") ?? "";
  if (!/^[a-z_]{1,100}$/.test(event) || !/^[A-Za-z0-9-]{1,100}$/.test(deliveryId)) return fail(c, 400, "bad_headers", "X-GitHub-Event and X-GitHub-Delivery are required.", "Send GitHub's headers: X-GitHub-Event (e.g. push) and X-GitHub-Delivery (a unique id).");
  let payload: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(body);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    payload = parsed as Record<string, unknown>;
  } catch {
    return fail(c, 400, "malformed_json", "The body is not a JSON object.", "Set the webhook's content type to application/json.");
  }

  const tenant = tenantId ?? (await installationTenant(c.env, payload));
  const now = new Date();
  const fresh = await recordDelivery(c.env, { tenantId: tenant, deliveryId, event, payload, rawPayload: body, ignoredBecause: tenant ? undefined : "no tenant is connected to this GitHub App installation" }, now);
  if (!fresh) return c.json({ ok: true, delivery: deliveryId, duplicate: true }, 200);
  if (!tenant) return c.json({ ok: true, delivery: deliveryId, ignored: true }, 202);
  c.executionCtx.waitUntil(processDelivery(c.env, tenant, deliveryId, now, payload).catch((err) => console.error("webhook processing failed", err)));
  return c.json({ ok: true, delivery: deliveryId }, 202);
}

export const webhookRoutes = new Hono<{ Bindings: Env }>();

webhookRoutes.post("/github", (c) => receive(c, async () => ({ tenantId: null, secret: c.env.GITHUB_WEBHOOK_SECRET || null })));

webhookRoutes.post("/github/:tenant", (c) => receive(c, async () => {
  const found = await tenantSecret(c.env, c.req.param("tenant"));
  return found ? { tenantId: found.tenantId, secret: found.secret } : { tenantId: null, secret: null };
}));
