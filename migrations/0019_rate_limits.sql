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

-- Webhook deliveries are also recognised by their content (README: Webhooks). GitHub's own
-- redelivery keeps the X-GitHub-Delivery id, which the primary key already catches; the same body
-- sent again under a new id (a replaying proxy, a copied request) must not be applied twice either.
-- Numbered with the rate limits because this branch owns one migration number.
-- content_hash: SHA-256 (hex) of the raw body; '' for deliveries stored before this migration.
-- duplicate_of: for a delivery recorded as a duplicate, the delivery first seen with that body.
ALTER TABLE webhook_deliveries ADD COLUMN content_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN duplicate_of TEXT NOT NULL DEFAULT '';
-- One original per body per tenant, so two copies racing in cannot both be processed.
CREATE UNIQUE INDEX webhook_deliveries_content_idx ON webhook_deliveries (tenant_id, content_hash)
  WHERE content_hash <> '' AND duplicate_of = '';
