-- The dashboard's sign-in sessions (/app): an API key exchanged for a cookie. Only the token's
-- SHA-256 is kept; the session stands only while the key it came from is live.
CREATE TABLE app_sessions (
  token_hash TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  access TEXT NOT NULL CHECK (access IN ('full', 'readonly')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX app_sessions_expiry ON app_sessions (expires_at);
