-- Outgoing webhooks (issue: coordination): an actor's notifications POSTed, signed, to a URL it
-- configured, so an agent hears of them without polling. The notifications table is the outbox:
-- cursor_seq is the last notifications.seq the dispatcher has looked at for the subscription, and
-- each notification it matched becomes one row of outbound_hook_deliveries, inserted once per
-- (subscription, notification) however many dispatchers run, then handed to the OUTBOUND_HOOKS queue.
-- secret: the HMAC-SHA256 signing key (shown once, at creation); kept as is because the server signs with it.
-- all_actors: 1 when the subscription (an operator's) covers every actor of the tenant, 0 for the owner's own.
-- kinds: a JSON array of notification kinds and prefixes (`check.*`); empty for all.
CREATE TABLE outbound_hooks (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  owner_actor_id TEXT NOT NULL,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  all_actors INTEGER NOT NULL,
  kinds TEXT NOT NULL,
  label TEXT NOT NULL,
  active INTEGER NOT NULL,
  cursor_seq INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX outbound_hooks_owner_idx ON outbound_hooks (tenant_id, owner_actor_id);
CREATE INDEX outbound_hooks_active_idx ON outbound_hooks (tenant_id) WHERE active = 1;

-- One row per (subscription, notification): the delivery log. status: pending (attempts to come;
-- next_attempt_at says when), delivered (a 2xx answer), failed (attempt_limit reached, or refused).
-- attempts counts every POST, replays included; a replay raises attempt_limit for a fresh round.
CREATE TABLE outbound_hook_deliveries (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  hook_id TEXT NOT NULL,
  notification_id TEXT NOT NULL,
  notification_seq INTEGER NOT NULL,
  recipient_actor_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  attempt_limit INTEGER NOT NULL,
  last_status INTEGER,
  last_error TEXT NOT NULL,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  delivered_at TEXT,
  replayed_at TEXT
);
CREATE UNIQUE INDEX outbound_hook_deliveries_once ON outbound_hook_deliveries (hook_id, notification_id);
CREATE INDEX outbound_hook_deliveries_hook_idx ON outbound_hook_deliveries (tenant_id, hook_id, id);
CREATE INDEX outbound_hook_deliveries_tenant_idx ON outbound_hook_deliveries (tenant_id, id);
-- The sweep's search for deliveries whose message was lost (a worker killed mid-attempt, a failed send).
CREATE INDEX outbound_hook_deliveries_pending_idx ON outbound_hook_deliveries (next_attempt_at) WHERE status = 'pending';
-- webhook_replay's "failed since"; then retention of finished rows.
CREATE INDEX outbound_hook_deliveries_status_idx ON outbound_hook_deliveries (tenant_id, status, updated_at);
CREATE INDEX outbound_hook_deliveries_retention_idx ON outbound_hook_deliveries (updated_at) WHERE status <> 'pending';

-- A subscription to every actor of a tenant reads the tenant's notifications in seq order.
CREATE INDEX notifications_tenant_seq_idx ON notifications (tenant_id, seq);
