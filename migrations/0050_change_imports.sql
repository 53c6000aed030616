-- Change events imported from elsewhere (change_import, change_import_git) carry the caller's
-- stable id for them, so a re-run imports nothing twice; events logged live have none.
ALTER TABLE events ADD COLUMN import_key TEXT;
CREATE UNIQUE INDEX events_tenant_import_key_idx ON events (tenant_id, import_key) WHERE import_key IS NOT NULL;
-- Imported events land after live ones in append order but keep their original time, so the reads
-- that mean "latest" (blame, an entity's history) order by time; this keeps blame a seek.
CREATE INDEX events_tenant_path_time_idx ON events (tenant_id, entity_path, timestamp);
