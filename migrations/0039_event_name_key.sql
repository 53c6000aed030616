-- prior_attempts also answers for near-identical entity names (users.email / user.email,
-- src/Auth.py::login / src/auth.py::login). The name key is an expression over entity_path
-- (src/changes/paths.ts, nameKeySql: the text below must stay identical to it), indexed per
-- tenant so the lookup is a seek, not a scan of the tenant's events (entity_path last: the
-- lookup reads nothing else, so the index covers it).
CREATE INDEX events_tenant_name_key_idx ON events (tenant_id, rtrim(replace(replace(replace(replace(replace(replace(lower(entity_path), '::', '.'), ':', '.'), '/', '.'), '_', '.'), '-', '.') || '.', 's.', '.'), '.'), entity_path);

-- Change events are embedded for prior_attempts' fuzzy recall (src/search/sources.ts,
-- change_event). New events are queued as they are written; these rows queue the events
-- written before, for the scheduled backfill to embed (content_hash '' never equals a real hash).
INSERT OR IGNORE INTO embeddings (tenant_id, object_type, object_id, content_hash, status, attempts, last_error, updated_at)
SELECT tenant_id, 'change_event', id, '', 'pending', 0, '', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM events;
