-- Path reservations (issue: coordination enforced where the write happens). An actor reserves paths
-- or globs in a registered repository, exclusive or shared, under a lease like a task claim. Every
-- reserve and release of a repository runs in that repository's claims Durable Object, one at a
-- time, so two exclusive holders of overlapping paths cannot both be let in; D1 is the record.
-- fencing_token: the repository's counter at the time of the reservation (the next one gets more);
-- a renewal keeps it. A row is live while released_at is NULL and expires_at is in the future.
CREATE TABLE path_reservations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  repository_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  pattern TEXT NOT NULL,
  exclusive INTEGER NOT NULL,
  task_id TEXT,
  reason TEXT NOT NULL,
  fencing_token INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  released_at TEXT
);
CREATE INDEX path_reservations_live_idx ON path_reservations (tenant_id, repository_id, expires_at) WHERE released_at IS NULL;
CREATE INDEX path_reservations_task_idx ON path_reservations (tenant_id, task_id) WHERE released_at IS NULL AND task_id IS NOT NULL;
CREATE INDEX path_reservations_token_idx ON path_reservations (tenant_id, repository_id, fencing_token);
