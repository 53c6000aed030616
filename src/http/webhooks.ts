/**
 * POST /webhooks/github (a GitHub App: the Worker secret GITHUB_WEBHOOK_SECRET, the tenant found
 * from the installation) and POST /webhooks/github/{tenant} (a tenant's own repository webhooks,
 * signed with that tenant's secret). Order matters: size, then signature, then parsing, then the
 * source's rate limit; only a verified, well-formed delivery is stored, and it is acknowledged
 * before it is processed, because GitHub gives up after 10 seconds.
 */
import { verify } from "@octokit/webhooks-methods";
import { Hono, type Context } from "hono";
import { SLUG } from "../auth/provision";
import { and, eq, sql } from "drizzle-orm";
import { dbOf } from "../db/client";
import { sha256Hex } from "../db/ids";
import { githubCredentials, githubWebhookSecrets, tenantRateLimits, tenants } from "../db/schema";
import { decryptToken } from "../git/credentials";
import { keepThrottled } from "../server/webhook-backlog";
import { processDelivery, recordDelivery } from "../server/webhooks";
import type { Env } from "../env";
import { declaredTooLarge, MAX_WEBHOOK_BODY_BYTES, mebibytes, readCapped } from "./body";
import { limitsFor, throttled, throttleError, type Bucket } from "./rate-limit";

type C = Context<{ Bindings: Env }>;

/** The envelope every refusal here answers with; `hint` says what the sender (GitHub, or an operator) can do. */
function fail(c: C, status: 400 | 401 | 413, code: string, message: string, hint: string) {
  return c.json({ ok: false, error: { code, message, hint, retryable: false } }, status);
}

const tooLarge = (c: C) =>
  fail(
    c,
    413,
    "payload_too_large",
    `Webhook bodies are limited to ${MAX_WEBHOOK_BODY_BYTES} bytes (${mebibytes(MAX_WEBHOOK_BODY_BYTES)}), GitHub's own cap.`,
    "GitHub never sends more than this; check what is posting to this URL.",
  );

async function validSignature(secret: string | null, body: string, signature: string | undefined): Promise<boolean> {
  if (!secret || !body || !signature) return false;
  try {
    return await verify(secret, body, signature);
  } catch {
    return false;
  }
}

/**
 * Where a delivery is counted and how many a minute it may have. `perMinute` is the tenant's own
 * tenant limit (override or default); the counter is the webhook source's own, apart from the
 * tenant's /mcp counter, so a push storm does not throttle the tenant's agents.
 */
interface Source {
  tenantId: string;
  bucket: Omit<Bucket, "perMinute">;
  /** The tenant's override of its tenant limit, when it has one. */
  override: number | null | undefined;
}

/** The tenant's own webhook secret; null for an unknown tenant or one without a secret, alike (no existence oracle). */
async function tenantSecret(env: Env, slug: string): Promise<{ tenantId: string; secret: string; override: number | null | undefined } | null> {
  if (!SLUG.test(slug) || !env.GITHUB_CREDENTIALS_KEY) return null;
  const row = await dbOf({ d1: env.DB })
    .select({
      tenant_id: tenants.id,
      secret: githubWebhookSecrets.secret,
      overridden: sql<number>`${tenantRateLimits.tenantId} IS NOT NULL`,
      tenant_per_min: tenantRateLimits.tenantPerMin,
    })
    .from(tenants)
    .innerJoin(githubWebhookSecrets, eq(githubWebhookSecrets.tenantId, tenants.id))
    .leftJoin(tenantRateLimits, eq(tenantRateLimits.tenantId, tenants.id))
    .where(eq(tenants.slug, slug))
    .get();
  if (!row) return null;
  try {
    return {
      tenantId: row.tenant_id,
      secret: await decryptToken(row.secret, row.tenant_id, env.GITHUB_CREDENTIALS_KEY),
      override: row.overridden ? row.tenant_per_min : undefined,
    };
  } catch {
    return null;
  }
}

/** The tenant whose App installation sent the delivery ("" when none has claimed it), counted per installation. */
async function installationSource(env: Env, payload: Record<string, unknown>): Promise<Source> {
  const id = (payload.installation as { id?: unknown } | undefined)?.id;
  const valid = typeof id === "number" && Number.isSafeInteger(id);
  const bucket = { scope: "installation" as const, name: `installation:${valid ? id : "none"}` };
  if (!valid) return { tenantId: "", bucket, override: undefined };
  const row = await dbOf({ d1: env.DB })
    .select({ tenant_id: githubCredentials.tenantId, overridden: sql<number>`${tenantRateLimits.tenantId} IS NOT NULL`, tenant_per_min: tenantRateLimits.tenantPerMin })
    .from(githubCredentials)
    .leftJoin(tenantRateLimits, eq(tenantRateLimits.tenantId, githubCredentials.tenantId))
    .where(and(eq(githubCredentials.kind, "app"), eq(githubCredentials.installationId, String(id))))
    .get();
  return { tenantId: row?.tenant_id ?? "", bucket, override: row?.overridden ? row.tenant_per_min : undefined };
}

interface Signer {
  secret: string | null;
  /** Set for a tenant's own URL: the delivery is that tenant's whatever the payload says. */
  source: Source | null;
}

async function receive(c: C, signer: () => Promise<Signer>): Promise<Response> {
  if (declaredTooLarge(c.req.raw, MAX_WEBHOOK_BODY_BYTES)) return tooLarge(c);
  const bytes = await readCapped(c.req.raw, MAX_WEBHOOK_BODY_BYTES);
  if (bytes === null) return tooLarge(c);
  const body = new TextDecoder().decode(bytes);
  const { secret, source: fromUrl } = await signer();
  if (!(await validSignature(secret, body, c.req.header("x-hub-signature-256")))) {
    return fail(
      c,
      401,
      "bad_signature",
      "Missing or invalid X-Hub-Signature-256.",
      "Sign the raw body with the webhook's secret (HMAC-SHA256); the App URL uses GITHUB_WEBHOOK_SECRET, a tenant URL that tenant's own secret.",
    );
  }

  const event = c.req.header("x-github-event") ?? "";
  const deliveryId = c.req.header("x-github-delivery") ?? "";
  if (!/^[a-z_]{1,100}$/.test(event) || !/^[A-Za-z0-9-]{1,100}$/.test(deliveryId))
    return fail(c, 400, "bad_headers", "X-GitHub-Event and X-GitHub-Delivery are required.", "Send GitHub's headers: X-GitHub-Event (e.g. push) and X-GitHub-Delivery (a unique id).");
  let payload: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(body);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    payload = parsed as Record<string, unknown>;
  } catch {
    return fail(c, 400, "malformed_json", "The body is not a JSON object.", "Set the webhook's content type to application/json.");
  }

  // Only signed deliveries count: anyone could otherwise spend a tenant's budget with junk posted to its URL.
  const source = fromUrl ?? (await installationSource(c.env, payload));
  const { tenantPerMin } = limitsFor(c.env, source.override === undefined ? null : { keyPerMin: null, tenantPerMin: source.override });
  // Fails open: a delivery is signed and bounded, and dropping it would lose what GitHub will not resend.
  const throttle = await throttled(c.env, [{ ...source.bucket, perMinute: tenantPerMin }]);
  const tenant = source.tenantId;
  const now = new Date();
  const contentHash = await sha256Hex(bytes);
  if (throttle) {
    // GitHub does not retry a refused delivery: keep it for the webhook_backlog job while there is room.
    const kept = tenant ? await keepThrottled(c.env, { tenantId: tenant, deliveryId, event, bucket: source.bucket.name, rawPayload: body, contentHash }, now) : null;
    if (kept) return c.json({ ok: true, delivery: deliveryId, queued: true, ...(kept === "already_queued" ? { duplicate: true } : {}) }, 202);
    c.header("Retry-After", String(throttle.retryAfterSeconds));
    return c.json({ ok: false, error: throttleError(throttle) }, 429);
  }

  const recorded = await recordDelivery(
    c.env,
    {
      tenantId: tenant,
      deliveryId,
      event,
      payload,
      rawPayload: body,
      contentHash,
      ignoredBecause: tenant ? undefined : "no tenant is connected to this GitHub App installation",
    },
    now,
  );
  if (!recorded.fresh) {
    return c.json({ ok: true, delivery: deliveryId, duplicate: true, ...(recorded.duplicateOf ? { duplicate_of: recorded.duplicateOf } : {}) }, 200);
  }
  if (!tenant) return c.json({ ok: true, delivery: deliveryId, ignored: true }, 202);
  c.executionCtx.waitUntil(processDelivery(c.env, tenant, deliveryId, now, payload).catch((err) => console.error("webhook processing failed", err)));
  return c.json({ ok: true, delivery: deliveryId }, 202);
}

export const webhookRoutes = new Hono<{ Bindings: Env }>();

webhookRoutes.post("/github", (c) => receive(c, async () => ({ secret: c.env.GITHUB_WEBHOOK_SECRET || null, source: null })));

webhookRoutes.post("/github/:tenant", (c) =>
  receive(c, async () => {
    const found = await tenantSecret(c.env, c.req.param("tenant"));
    if (!found) return { secret: null, source: null };
    return { secret: found.secret, source: { tenantId: found.tenantId, bucket: { scope: "webhooks", name: `webhooks:${found.tenantId}` }, override: found.override } };
  }),
);
