import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { actors, apiKeys, tenantRateLimits } from "../db/schema";
import { hashApiKey, KEY_PREFIX } from "./provision";

/** A tenant's rate-limit overrides (docs/limits.md: Rate limits); null keeps the Worker's default, 0 is off. */
export interface LimitOverrides {
  keyPerMin: number | null;
  tenantPerMin: number | null;
}

export interface Identity {
  tenantId: string;
  actorId: string;
  actorName: string;
  /** The key's role is operator: it may override leases and act on other actors' runs. */
  operator: boolean;
  /** The API key's own id: its rate-limit counter is named after it. */
  keyId: string;
  /**
   * The tenant's rate-limit overrides, read with the key (and cached with it) so checking a limit
   * costs no query of its own; an operator's change reaches every isolate within IDENTITY_CACHE_MS.
   */
  limits: LimitOverrides | null;
}

/**
 * Keys seen recently, per isolate, so the hot path of a busy agent skips one D1 round trip.
 * The price is that a revoked key keeps working for up to this long in an isolate that has it.
 */
export const IDENTITY_CACHE_MS = 30_000;
const IDENTITY_CACHE_MAX = 1000;
const cache = new Map<string, { identity: Identity; until: number }>();

/** The tenant and actor a bearer key belongs to, or null for an unknown or revoked key. */
export async function identityForKey(db: Db, key: string, now: number = Date.now()): Promise<Identity | null> {
  // Keyed by the key itself, which the request already holds in this isolate's memory: a hit
  // then costs no digest (about half a millisecond of the isolate's CPU each, a twentieth of a
  // whole read call). Only the hash ever leaves the isolate.
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.identity;
  const identity = await lookup(db, await hashApiKey(key));
  cache.delete(key);
  if (identity) {
    // Map keeps insertion order, so the first key is the oldest entry.
    if (cache.size >= IDENTITY_CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, { identity, until: now + IDENTITY_CACHE_MS });
  }
  return identity;
}

/** Longer than any key this server mints; text past it is not looked up. */
const MAX_API_KEY_CHARS = 200;

/**
 * The identity of text presented as an API key (a bearer token, a pasted form field), or null
 * when it is not shaped like one of our keys or is unknown or revoked. The shape check comes
 * first, so an OAuth token or a stray paste costs no hashing and no lookup.
 */
export async function identityForApiKey(db: Db, text: string): Promise<Identity | null> {
  if (!text.startsWith(KEY_PREFIX) || text.length > MAX_API_KEY_CHARS) return null;
  return identityForKey(db, text);
}

async function lookup(db: Db, hash: string): Promise<Identity | null> {
  const row = await db
    .select({
      tenantId: apiKeys.tenantId,
      actorId: apiKeys.actorId,
      actorName: actors.name,
      keyId: apiKeys.id,
      role: apiKeys.role,
      keyPerMin: tenantRateLimits.keyPerMin,
      tenantPerMin: tenantRateLimits.tenantPerMin,
      overridden: tenantRateLimits.tenantId,
    })
    .from(apiKeys)
    .innerJoin(actors, eq(actors.id, apiKeys.actorId))
    .leftJoin(tenantRateLimits, eq(tenantRateLimits.tenantId, apiKeys.tenantId))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .get();
  if (!row) return null;
  const { keyPerMin, tenantPerMin, overridden, role, ...identity } = row;
  return { ...identity, operator: role === "operator", limits: overridden ? { keyPerMin, tenantPerMin } : null };
}

/** Extracts the key from `Authorization: Bearer <key>`, or null. */
export function bearerKey(header: string | undefined | null): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m ? m[1]! : null;
}
