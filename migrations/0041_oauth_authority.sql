-- OAuth grants end when what they rest on ends (README: OAuth in production).

-- The API key a grant was signed in with: revoking the key ends the grant (/mcp and the token
-- endpoint read it with the grant's row). NULL for GitHub sign-ins and for grants made before this.
ALTER TABLE oauth_grants ADD COLUMN key_id TEXT;
-- When the maintenance job last found the grant still held by the provider (KV), and when the
-- provider's copy was deleted after the mirror ended it: the job keeps the two in step.
ALTER TABLE oauth_grants ADD COLUMN checked_at TEXT;
ALTER TABLE oauth_grants ADD COLUMN provider_ended_at TEXT;
CREATE INDEX oauth_grants_key_idx ON oauth_grants (key_id) WHERE key_id IS NOT NULL;

-- Every refresh token a grant rotated out, by SHA-256 (the token itself is never stored). Presenting
-- one again is reuse (OAuth 2.1, RFC 9700 §4.14) and ends the grant, except one retry within a short
-- grace window (REFRESH_RETRY_GRACE_MS) for a client whose response was lost. successor_id is the
-- token its rotation issued; retries counts re-presentations (a token with retries > 0 is spent).
CREATE TABLE oauth_refresh_tokens (
  token_id TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL,
  rotated_at TEXT NOT NULL,
  successor_id TEXT,
  retries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);
