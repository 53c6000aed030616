-- Request rate limits (README: Rate limits). The defaults are Worker vars (RATE_LIMIT_KEY_PER_MIN,
-- RATE_LIMIT_TENANT_PER_MIN); an operator overrides them per tenant here with `npm run keys -- rate-limit`.
-- A NULL column keeps the default; 0 turns that limit off for the tenant. The counters themselves
-- live in RateLimitDO, one object per key and per tenant, never in D1.
CREATE TABLE tenant_rate_limits (
  tenant_id TEXT PRIMARY KEY,
  key_per_min INTEGER CHECK (key_per_min IS NULL OR key_per_min >= 0),
  tenant_per_min INTEGER CHECK (tenant_per_min IS NULL OR tenant_per_min >= 0),
  updated_at TEXT NOT NULL
);
