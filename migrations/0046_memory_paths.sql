-- Memory that knows when the code moved (issue: coordination). A knowledge note, a work decision or
-- a code ref may be linked to paths or globs of a registered repository (memory_paths). A push to
-- the repository's default branch that changes a linked file marks the object stale
-- (memory_stale_marks), and so it does for change-ledger decision events on a changed file
-- (object_type 'change_event'). One mark per object: a newer commit replaces an older one.
-- Confirming or updating the object sets cleared_at; the row stays so that a commit from before
-- the confirmation, delivered again, does not mark it a second time.
-- object_type: note, decision, code_ref (links); the same and change_event (marks).
-- changed_at: the commit's own timestamp; marked_at: when the push was processed.
CREATE TABLE memory_paths (
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  repository_id TEXT NOT NULL,
  pattern TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, object_type, object_id, repository_id, pattern)
);
CREATE INDEX memory_paths_repository_idx ON memory_paths (tenant_id, repository_id);

CREATE TABLE memory_stale_marks (
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  repository_id TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  path TEXT NOT NULL,
  changed_at TEXT NOT NULL,
  marked_at TEXT NOT NULL,
  cleared_at TEXT,
  PRIMARY KEY (tenant_id, object_type, object_id)
);
