/**
 * The rate limits a tenant has (docs/limits.md: Rate limits): the Worker vars' defaults, its overrides,
 * and the SQL for `npm run keys -- rate-limit` (scripts/keys.ts) that sets them. Plain SQL because `wrangler d1 execute` takes no bound parameters;
 * every value is validated or escaped here.
 */
import type { Env } from "../env";
import type { LimitOverrides } from "./identity";
import { sqlLiteral as quote } from "../db/sql-literal";
import { SLUG } from "./provision";

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

/** Far above anything one tenant should need; a typo with extra zeros is refused rather than stored. */
export const MAX_PER_MIN = 1_000_000;

/** A limit as typed: a whole number of requests per minute (0 turns the limit off), or `default` to drop the override. */
export type LimitSetting = number | "default";

export function parseLimit(flag: string, text: string | undefined): LimitSetting | undefined {
  if (text === undefined) return undefined;
  if (text === "default") return "default";
  if (!/^\d{1,7}$/.test(text) || Number(text) > MAX_PER_MIN) {
    throw new Error(`${flag} must be a whole number of requests per minute from 0 (off) to ${MAX_PER_MIN}, or "default"`);
  }
  return Number(text);
}

const column = (v: LimitSetting) => (v === "default" ? "NULL" : String(v));

/** Sets the given limits for a tenant; a limit not given keeps its current setting. */
export function setRateLimitSql(tenantId: string, limits: { keyPerMin?: LimitSetting; tenantPerMin?: LimitSetting }, now = new Date()): string {
  const { keyPerMin, tenantPerMin } = limits;
  if (keyPerMin === undefined && tenantPerMin === undefined) throw new Error("give --key-per-min and/or --tenant-per-min");
  for (const v of [keyPerMin, tenantPerMin]) {
    if (v !== undefined && v !== "default" && !(Number.isSafeInteger(v) && v >= 0 && v <= MAX_PER_MIN)) throw new Error(`a limit must be 0–${MAX_PER_MIN} or "default"`);
  }
  const updates = [
    keyPerMin !== undefined ? "key_per_min = excluded.key_per_min" : "",
    tenantPerMin !== undefined ? "tenant_per_min = excluded.tenant_per_min" : "",
    "updated_at = excluded.updated_at",
  ]
    .filter(Boolean)
    .join(", ");
  return `INSERT INTO tenant_rate_limits (tenant_id, key_per_min, tenant_per_min, updated_at)
   VALUES (${quote(tenantId)}, ${keyPerMin === undefined ? "NULL" : column(keyPerMin)}, ${tenantPerMin === undefined ? "NULL" : column(tenantPerMin)}, '${now.toISOString()}')
   ON CONFLICT (tenant_id) DO UPDATE SET ${updates}`;
}

/** Drops a tenant's overrides: both limits go back to the Worker's defaults. */
export const clearRateLimitSql = (tenantId: string) => `DELETE FROM tenant_rate_limits WHERE tenant_id = ${quote(tenantId)}`;

/** The overrides in force, for every tenant or one. */
export function listRateLimitsSql(slug?: string): string {
  if (slug !== undefined && !SLUG.test(slug)) throw new Error("--tenant must be a slug");
  return `SELECT t.slug AS tenant, coalesce(CAST(r.key_per_min AS TEXT), 'default') AS key_per_min,
     coalesce(CAST(r.tenant_per_min AS TEXT), 'default') AS tenant_per_min, r.updated_at
   FROM tenant_rate_limits r JOIN tenants t ON t.id = r.tenant_id
   ${slug ? `WHERE t.slug = ${quote(slug)}` : ""} ORDER BY t.slug`;
}
