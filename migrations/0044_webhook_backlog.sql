-- Webhook deliveries that arrived over their source's rate limit (README: Rate limits). GitHub does
-- not retry a refused delivery, so instead of a 429 a verified delivery is kept here and the
-- webhook_backlog cron job feeds it through the normal path (webhook_deliveries, de-duplicated by
-- delivery id and body) as the source's limit allows. Bounded per tenant (count and bytes); beyond
-- that the route answers 429 as before.
-- bucket: the source's rate-limit counter (installation:<id> or webhooks:<tenant id>), so the drain
-- counts in the same one as live deliveries.
CREATE TABLE webhook_backlog (
  tenant_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  event TEXT NOT NULL,
  bucket TEXT NOT NULL,
  payload TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, delivery_id)
);
CREATE INDEX webhook_backlog_received_idx ON webhook_backlog (received_at);
