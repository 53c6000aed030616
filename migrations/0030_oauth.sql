-- OAuth sign-in for hosted MCP clients (README: OAuth in production). Tokens, codes and clients live
-- in the OAUTH_KV namespace, owned by @cloudflare/workers-oauth-provider; D1 keeps what an operator
-- manages with `npm run oauth`: which GitHub user signs in as which actor, and a mirror of every
-- grant, so grants can be listed per tenant and revoked with one UPDATE that /mcp honours at once.

-- A GitHub login (lowercase) mapped to one actor. github_user_id is learnt at the first sign-in and
-- then required: a login renamed and taken by someone else does not inherit the mapping.
CREATE TABLE oauth_github_users (
  login TEXT PRIMARY KEY,
  github_user_id INTEGER,
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  role TEXT NOT NULL DEFAULT 'agent' CHECK (role IN ('agent', 'operator')),
  created_at TEXT NOT NULL
);
CREATE INDEX oauth_github_users_tenant_idx ON oauth_github_users (tenant_id);

-- One row per grant, written when its authorization code is exchanged. revoked_at set means the
-- grant's tokens are refused by /mcp and its refresh token by the token endpoint.
-- user_id: the provider's user id (the actor id); signed_in_with: api_key | github.
CREATE TABLE oauth_grants (
  grant_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_name TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  scope TEXT NOT NULL,
  signed_in_with TEXT NOT NULL,
  github_login TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT,
  revoked_reason TEXT
);
CREATE INDEX oauth_grants_tenant_idx ON oauth_grants (tenant_id, created_at);
CREATE INDEX oauth_grants_user_client_idx ON oauth_grants (user_id, client_id) WHERE revoked_at IS NULL;
