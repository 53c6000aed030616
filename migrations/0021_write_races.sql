-- An acknowledged write is never lost (README: "Concurrent writes to one name").
-- Numbered 0021 because 0019 and 0020 are taken by other branches.

-- Files. Every upload to a storage_path becomes a version with an R2 object of its own, and the
-- version is claimed here by one INSERT on the primary key: of two racing uploads one claims it, and
-- the other's object is deleted rather than written over the winner's bytes.
CREATE TABLE blob_versions (
  tenant_id TEXT NOT NULL,
  storage_path TEXT NOT NULL,
  version INTEGER NOT NULL,
  object_key TEXT NOT NULL,               -- the R2 key holding this version's bytes
  sha256 TEXT,                            -- NULL for an object put in the bucket out of band (never hashed here)
  size_bytes INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, storage_path, version)
);

-- Which version of its storage_path a file attachment holds (NULL for links).
ALTER TABLE attachments ADD COLUMN blob_version INTEGER;

-- Files attached before versions existed were stored at <tenant>/<storage_path>: that object is
-- their version 1 (the earliest attachment's size and type describe it).
INSERT OR IGNORE INTO blob_versions (tenant_id, storage_path, version, object_key, sha256, size_bytes, mime_type, created_by, created_at)
  SELECT tenant_id, storage_path, 1, tenant_id || '/' || storage_path, NULL, COALESCE(size_bytes, 0),
         COALESCE(mime_type, 'application/octet-stream'), created_by, created_at
  FROM attachments WHERE kind = 'file' AND storage_path IS NOT NULL ORDER BY created_at, id;
UPDATE attachments SET blob_version = 1 WHERE kind = 'file' AND storage_path IS NOT NULL;

-- Skills. skill_upsert without expected_version may replace a skill someone else just wrote; every
-- version's content is kept, so the replaced one can still be read (skill_get with version).
-- Triggers write the history, so no code path can change a skill without recording it.
CREATE TABLE skill_versions (
  tenant_id TEXT NOT NULL,
  skill_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  tags TEXT NOT NULL,
  status TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (skill_id, version)
);

INSERT INTO skill_versions (tenant_id, skill_id, version, name, description, body, tags, status, content_hash, updated_by, updated_at)
  SELECT tenant_id, id, version, name, description, body, tags, status, content_hash, updated_by, updated_at FROM skills;

CREATE TRIGGER skills_version_ai AFTER INSERT ON skills BEGIN
  INSERT INTO skill_versions (tenant_id, skill_id, version, name, description, body, tags, status, content_hash, updated_by, updated_at)
  VALUES (new.tenant_id, new.id, new.version, new.name, new.description, new.body, new.tags, new.status, new.content_hash, new.updated_by, new.updated_at);
END;
CREATE TRIGGER skills_version_au AFTER UPDATE ON skills WHEN new.version <> old.version BEGIN
  INSERT INTO skill_versions (tenant_id, skill_id, version, name, description, body, tags, status, content_hash, updated_by, updated_at)
  VALUES (new.tenant_id, new.id, new.version, new.name, new.description, new.body, new.tags, new.status, new.content_hash, new.updated_by, new.updated_at);
END;
