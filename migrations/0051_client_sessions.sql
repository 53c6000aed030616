-- Which MCP session an agent client's own session id was last seen on (the X-Agent-Session-Id,
-- X-Claude-Code-Session-Id or Session-Id header of /mcp requests), so a hook event naming that id
-- (its session_id) acts in the same session and lands on the same run as the agent's tool calls.
-- Written once per (MCP session, client session id); keyed by tenant and actor, so one tenant's or
-- actor's header never maps another's hooks.
CREATE TABLE client_sessions (
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  client_session_id TEXT NOT NULL,
  mcp_session_id TEXT NOT NULL,
  seen_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, actor_id, client_session_id)
);
CREATE INDEX client_sessions_age_idx ON client_sessions (seen_at);
