-- The daily stale-decision sweep. Numbered 0018 because the webhook receiver's branch takes 0017.

-- A notification written by a job that may run twice (a retried cron, a rerun by hand) carries a
-- key naming the fact it reports; the second insert of the same key for the same recipient is ignored.
ALTER TABLE notifications ADD COLUMN dedupe_key TEXT;
CREATE UNIQUE INDEX notifications_dedupe_idx ON notifications (tenant_id, actor_id, dedupe_key) WHERE dedupe_key IS NOT NULL;

-- Where a bounded job stopped, so the next run continues there instead of starting over.
CREATE TABLE cron_cursors (
  job TEXT PRIMARY KEY,
  cursor TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
