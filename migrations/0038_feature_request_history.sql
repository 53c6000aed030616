-- The lifecycle of a feature request (seed 001: open → accepted → in_progress → shipped | declined):
-- every status move an operator makes, with its note, so the filer reads how it got where it is.
-- Every query filters by tenant_id.
CREATE TABLE feature_request_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  from_status TEXT NOT NULL,
  to_status TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  actor_id TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX feature_request_events_request_idx ON feature_request_events (tenant_id, request_id, seq);
