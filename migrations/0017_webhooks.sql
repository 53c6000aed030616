-- GitHub webhooks: deliveries (de-duplication, inspection, retry), per-tenant webhook secrets, and
-- the commits pushes report.

-- Keyed by tenant as well as GitHub's delivery id, so one tenant's deliveries can never shadow
-- another's. tenant_id is '' for App deliveries whose installation no tenant claims (kept so an
-- operator can see them). The raw payload is kept (when it fits a D1 row) so a failure can be retried.
CREATE TABLE webhook_deliveries (
  tenant_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  event TEXT NOT NULL,
  action TEXT NOT NULL DEFAULT '',
  repository TEXT NOT NULL DEFAULT '',     -- owner/name as the payload names it
  status TEXT NOT NULL,                    -- pending | processed | ignored | failed
  error TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  payload TEXT NOT NULL DEFAULT '',
  received_at TEXT NOT NULL,
  attempted_at TEXT,                       -- when the last attempt started: a stale one was cut off
  processed_at TEXT,
  PRIMARY KEY (tenant_id, delivery_id)
);
CREATE INDEX webhook_deliveries_retry_idx ON webhook_deliveries (status, received_at);
CREATE INDEX webhook_deliveries_received_idx ON webhook_deliveries (received_at);

-- A tenant's own repository webhooks are signed with a secret only that tenant knows: AES-GCM
-- ciphertext bound to the tenant id, under GITHUB_CREDENTIALS_KEY (like github_credentials).
CREATE TABLE github_webhook_secrets (
  tenant_id TEXT PRIMARY KEY,
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Commits reported by push deliveries, for commit search and for back-filling the change ledger.
CREATE TABLE git_commits (
  tenant_id TEXT NOT NULL,
  repository_id TEXT NOT NULL,
  sha TEXT NOT NULL,
  ref TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  author_name TEXT NOT NULL DEFAULT '',
  author_email TEXT NOT NULL DEFAULT '',
  committed_at TEXT NOT NULL,
  files TEXT NOT NULL DEFAULT '[]',        -- JSON: paths added, modified or removed
  delivery_id TEXT NOT NULL DEFAULT '',
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, repository_id, sha)
);
CREATE INDEX git_commits_tenant_time_idx ON git_commits (tenant_id, committed_at);
