-- Seed 002 over the GitHub API: each tenant's GitHub credentials, and its stored presets.

-- One row per tenant: a token (AES-GCM ciphertext, bound to the tenant id, under the Worker secret
-- GITHUB_CREDENTIALS_KEY) or a GitHub App installation id (the app's key is a Worker secret).
CREATE TABLE github_credentials (
  tenant_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,                       -- token | app
  secret TEXT NOT NULL DEFAULT '',          -- kind token: v1:<iv>:<ciphertext>
  installation_id TEXT NOT NULL DEFAULT '', -- kind app
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Presets (seed 002's .rethunk/git-mcp-presets.json entries) stored for the tenant: a named set of
-- repositories (nested_roots, as owner/name) and parity pairs ({left, right, label?} as owner/name@ref).
CREATE TABLE git_presets (
  tenant_id TEXT NOT NULL,
  name TEXT NOT NULL,
  nested_roots TEXT NOT NULL DEFAULT '[]',
  parity_pairs TEXT NOT NULL DEFAULT '[]',
  workspace_root_hint TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
