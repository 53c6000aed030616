/**
 * Request rate limits at the HTTP edge (README: Rate limits). Counters live in RateLimitDO; the
 * limits come from the Worker's vars, overridden per tenant by an operator (tenant_rate_limits,
 * read together with the key's identity so a check costs no extra D1 query).
 */
import type { Identity, LimitOverrides } from "../auth/identity";
import type { Env } from "../env";
import type { ErrorBody } from "../mcp/errors";

export const DEFAULT_KEY_PER_MIN = 600;
export const DEFAULT_TENANT_PER_MIN = 6000;

/** A var as a per-minute limit; 0 is off. An unset or malformed value keeps the documented default. */
export function perMinute(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value.trim() !== "" && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

export function limitsFor(env: Env, overrides: LimitOverrides | null): { keyPerMin: number; tenantPerMin: number } {
  return {
    keyPerMin: overrides?.keyPerMin ?? perMinute(env.RATE_LIMIT_KEY_PER_MIN, DEFAULT_KEY_PER_MIN),
    tenantPerMin: overrides?.tenantPerMin ?? perMinute(env.RATE_LIMIT_TENANT_PER_MIN, DEFAULT_TENANT_PER_MIN),
  };
}

/** The two counters every authenticated request is checked against. */
export function callerBuckets(env: Env, identity: Identity): Bucket[] {
  const { keyPerMin, tenantPerMin } = limitsFor(env, identity.limits);
  return [
    { scope: "key", name: `key:${identity.keyId}`, perMinute: keyPerMin },
    { scope: "tenant", name: `tenant:${identity.tenantId}`, perMinute: tenantPerMin },
  ];
}

export type Scope = "key" | "tenant" | "installation" | "webhooks" | "registration";

export interface Bucket {
  scope: Scope;
  /** The counter object's name, e.g. `key:<key id>`. */
  name: string;
  perMinute: number;
}

export interface Throttle {
  scope: Scope;
  perMinute: number;
  retryAfterSeconds: number;
}

/**
 * Counts the request in every bucket whose limit is on, side by side (one round trip of wall
 * time), and returns the refusal with the longest wait, or null. A request refused by one bucket
 * still counts in the others that let it through; that only matters while it is refused anyway.
 * The limiter failing open is deliberate: an unreachable counter must not take the API down.
 */
export async function throttled(env: Env, buckets: Bucket[]): Promise<Throttle | null> {
  const active = buckets.filter((b) => b.perMinute > 0);
  if (active.length === 0) return null;
  const verdicts = await Promise.allSettled(active.map((b) => env.RATE_LIMITS.getByName(b.name).hit(b.perMinute)));
  let worst: Throttle | null = null;
  for (const [i, v] of verdicts.entries()) {
    const bucket = active[i]!;
    if (v.status === "rejected") {
      console.error(`rate limiter ${bucket.name} failed; letting the request through`, v.reason);
      continue;
    }
    if (!v.value.allowed && (!worst || v.value.retryAfterSeconds > worst.retryAfterSeconds)) {
      worst = { scope: bucket.scope, perMinute: bucket.perMinute, retryAfterSeconds: v.value.retryAfterSeconds };
    }
  }
  return worst;
}

const OVER: Record<Scope, (n: number) => string> = {
  key: (n) => `this API key made more than ${n} requests in the last minute`,
  tenant: (n) => `this tenant's keys together made more than ${n} requests in the last minute`,
  installation: (n) => `this GitHub App installation sent more than ${n} webhook deliveries in the last minute`,
  webhooks: (n) => `this tenant's webhook URL received more than ${n} deliveries in the last minute`,
  registration: (n) => `this address registered more than ${n} OAuth clients in the last minute`,
};

/** The envelope's error for a throttled request; the wait is also in the Retry-After header. */
export function throttleError(t: Throttle): ErrorBody & { retry_after_seconds: number } {
  const webhook = t.scope === "installation" || t.scope === "webhooks";
  const wait = `${t.retryAfterSeconds} second${t.retryAfterSeconds === 1 ? "" : "s"}`;
  return {
    code: "rate_limited",
    message: `Rate limited: ${OVER[t.scope](t.perMinute)}. Retry after ${wait}.`,
    hint: webhook
      ? `GitHub does not retry a failed delivery by itself: redeliver it (the webhook's Recent Deliveries, or its API) after ${wait}. An operator can raise the tenant's limit with \`npm run keys -- rate-limit --tenant-per-min\`.`
      : `Wait ${wait} (the Retry-After header) and retry; spread calls out or do more per call. An operator can change the tenant's limits with \`npm run keys -- rate-limit\`.`,
    retryable: true,
    retry_after_seconds: t.retryAfterSeconds,
  };
}
