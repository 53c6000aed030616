/**
 * Rate limits (docs/limits.md: Rate limits): each request at the HTTP edge, and what its calls cost beyond
 * that through the request's meter. Counters live in RateLimitDO; the
 * limits come from the Worker's vars, overridden per tenant by an operator (tenant_rate_limits,
 * read together with the key's identity so a check costs no extra D1 query).
 */
import type { Identity } from "../auth/identity";
import { limitsFor } from "../auth/rate-limits";
import type { Env } from "../env";
import { type ErrorBody, excerpt, ToolError } from "../core/errors";
import { BATCH_ALLOWANCE, type Meter, type MeterSeed } from "../core/meter";

export { limitsFor, perMinute } from "../auth/rate-limits";

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
  /** What the refused call needed, when more than one unit (a composite call, a batch write). */
  units?: number;
}

export interface Charge {
  /** The refusal with the longest wait; when set, nothing of the charge stays counted anywhere. */
  throttle: Throttle | null;
  /** Units left under the tightest limit that answered; null with every limit off, or none reachable. */
  remaining: number | null;
  /** Counters that could not be reached (a Durable Object error). */
  unreachable: Bucket[];
}

/**
 * Counts `units` in every bucket whose limit is on, side by side (one round trip of wall time),
 * all or nothing: when one bucket refuses, the units the others counted are given back. A call
 * needing more than a limit allows is refused without asking the counters (it never fits).
 * `failClosed`: a counter that cannot be reached refuses the charge too (it is given back
 * elsewhere); otherwise it is logged and skipped (docs/limits.md: Rate limits, when a counter fails).
 */
export async function charge(env: Env, buckets: Bucket[], units = 1, failClosed = false): Promise<Charge> {
  const active = buckets.filter((b) => b.perMinute > 0);
  const tooBig = active.find((b) => units > b.perMinute);
  if (tooBig) return { throttle: { scope: tooBig.scope, perMinute: tooBig.perMinute, retryAfterSeconds: 60, units }, remaining: null, unreachable: [] };
  const verdicts = await Promise.allSettled(active.map((b) => env.RATE_LIMITS.getByName(b.name).hit(b.perMinute, units)));
  let throttle: Throttle | null = null;
  let remaining: number | null = null;
  const unreachable: Bucket[] = [];
  const counted: { bucket: Bucket; window: number }[] = [];
  for (const [i, v] of verdicts.entries()) {
    const bucket = active[i]!;
    if (v.status === "rejected") {
      // A stable word to count these by in the logs.
      console.error(`rate_limiter_unavailable: counter ${bucket.name} failed; ${failClosed ? "refusing" : "letting through"} ${units} unit(s)`, v.reason);
      unreachable.push(bucket);
    } else if (v.value.allowed) {
      counted.push({ bucket, window: v.value.window });
      remaining = remaining === null ? v.value.remaining : Math.min(remaining, v.value.remaining);
    } else if (!throttle || v.value.retryAfterSeconds > throttle.retryAfterSeconds) {
      throttle = { scope: bucket.scope, perMinute: bucket.perMinute, retryAfterSeconds: v.value.retryAfterSeconds, ...(units > 1 ? { units } : {}) };
    }
  }
  if (throttle || (failClosed && unreachable.length > 0)) {
    await Promise.allSettled(counted.map((c) => env.RATE_LIMITS.getByName(c.bucket.name).refund(units, c.window)));
    return { throttle, remaining: null, unreachable };
  }
  return { throttle: null, remaining, unreachable };
}

/**
 * Counts one request in every bucket, failing open: an unreachable counter must not take the API
 * down. Returns the refusal with the longest wait, or null.
 */
export async function throttled(env: Env, buckets: Bucket[]): Promise<Throttle | null> {
  return (await charge(env, buckets)).throttle;
}

const OVER: Record<Scope, (n: number) => string> = {
  key: (n) => `this API key made more than ${n} requests in the last minute`,
  tenant: (n) => `this tenant's keys together made more than ${n} requests in the last minute`,
  installation: (n) => `this GitHub App installation sent more than ${n} webhook deliveries in the last minute`,
  webhooks: (n) => `this tenant's webhook URL received more than ${n} deliveries in the last minute`,
  registration: (n) => `this address registered more than ${n} OAuth clients in the last minute`,
};

const WHOSE: Record<Scope, string> = {
  key: "this API key's",
  tenant: "this tenant's",
  installation: "this GitHub App installation's",
  webhooks: "this tenant's webhook",
  registration: "this address's registration",
};

const seconds = (n: number) => `${n} second${n === 1 ? "" : "s"}`;

/** The refusal of a call that needed several units (docs/limits.md: Rate limits, what a call counts). */
function overBudget(t: Throttle & { units: number }): ErrorBody & { retry_after_seconds: number } {
  const never = t.units > t.perMinute;
  const wait = seconds(t.retryAfterSeconds);
  const split = `split it into calls of at most ${t.perMinute} units (fewer ops per call, or batches of at most ${t.perMinute - 1 + BATCH_ALLOWANCE} items)`;
  return {
    code: "rate_limited",
    message: never
      ? `Rate limited: this call needs ${t.units} units (one per op, one per batch item beyond ${BATCH_ALLOWANCE}), more than ${WHOSE[t.scope]} limit of ${t.perMinute} a minute allows. Nothing was done.`
      : `Rate limited: this call needs ${t.units} units (one per op, one per batch item beyond ${BATCH_ALLOWANCE}) and ${WHOSE[t.scope]} limit of ${t.perMinute} a minute has fewer left. Nothing was done; ${t.units} units fit after ${wait}.`,
    hint: never ? `This call can never fit: ${split}.` : `Wait ${wait} and retry, or ${split} and spread them out. An operator can change the tenant's limits with \`npm run keys -- rate-limit\`.`,
    retryable: !never,
    retry_after_seconds: t.retryAfterSeconds,
  };
}

/** The envelope's error for a throttled request; the wait is also in the Retry-After header. */
export function throttleError(t: Throttle): ErrorBody & { retry_after_seconds: number } {
  if (t.units !== undefined && t.units > 1) return overBudget({ ...t, units: t.units });
  const webhook = t.scope === "installation" || t.scope === "webhooks";
  const wait = seconds(t.retryAfterSeconds);
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

/**
 * The meter a /mcp request's tools charge (src/core/meter.ts), starting from the request's own
 * unit counted at the edge. Units beyond that fail closed: when a counter cannot be reached, a
 * call that costs one unit still runs (the edge let it through) and one that costs more is refused.
 */
export function requestMeter(env: Env, buckets: Bucket[], edge: Charge): Meter {
  let counted = 1;
  let remaining = edge.remaining;
  return {
    async charge(extra, call) {
      if (extra <= 0) return;
      const c = await charge(env, buckets, extra, true);
      const what = excerpt(call.what, 80);
      if (c.throttle) {
        const e = throttleError({ ...c.throttle, units: call.units });
        throw new ToolError(e.code, e.message.replace("this call needs", `this call (${what}) needs`), { hint: e.hint, retryable: e.retryable });
      }
      if (c.unreachable.length > 0) {
        throw new ToolError("rate_limiter_unavailable", `The rate limiter could not count the ${call.units} units this call (${what}) needs, so nothing was done.`, {
          hint: "Retry in a few seconds. Calls that cost one unit (one op, at most 10 batch items) still run while the limiter is down: split the work into those.",
          retryable: true,
        });
      }
      counted += extra;
      remaining = c.remaining;
    },
    report: () => ({ counted, remaining }),
    seed: () => ({ buckets: buckets.map((b) => ({ scope: b.scope, name: b.name, perMinute: b.perMinute })) }),
  };
}

/**
 * The meter of work a request queued (an MCP task's run): it charges the request's own counters,
 * its one unit already counted when the request came in.
 */
export function queuedMeter(env: Env, seed: MeterSeed): Meter {
  return requestMeter(env, seed.buckets as Bucket[], { throttle: null, remaining: null, unreachable: [] });
}
