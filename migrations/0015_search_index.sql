-- Seed 001 `search`: one keyword index across projects, tasks, decisions, knowledge notes,
-- comments, handoffs (object type work_request, as comments and activity name them) and change
-- events.
--
-- search_docs holds one row per searchable object: its tenant, type, id, project and the text
-- indexed as title and body. Both FTS5 indexes use it as their external content, so the text is
-- stored once and snippet() can read it. The source tables' triggers only upsert or delete
-- search_docs rows (found through a unique index, never by scanning an FTS table); search_docs'
-- own triggers keep the two indexes in step. Its integer key is the FTS rowid: projects, tasks
-- and handoffs have text keys, and their implicit rowids may change on VACUUM.
CREATE TABLE search_docs (
  seq INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,     -- project | task | decision | note | comment | work_request | event
  object_id TEXT NOT NULL,
  project_id TEXT,
  title TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX search_docs_object_idx ON search_docs (object_type, object_id);

-- Words, porter-stemmed, for bm25 ranking.
CREATE VIRTUAL TABLE search_fts USING fts5 (
  title, body,
  content = 'search_docs', content_rowid = 'seq', tokenize = 'porter unicode61'
);
-- Trigrams: substrings inside words (three characters or more), the top-up after word hits.
CREATE VIRTUAL TABLE search_fts_trgm USING fts5 (
  title, body,
  content = 'search_docs', content_rowid = 'seq', tokenize = 'trigram'
);
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, title, body) VALUES (new.seq, new.title, new.body);
  INSERT INTO search_fts_trgm (rowid, title, body) VALUES (new.seq, new.title, new.body);
END;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
  INSERT INTO search_fts_trgm (search_fts_trgm, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE OF title, body ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
  INSERT INTO search_fts (rowid, title, body) VALUES (new.seq, new.title, new.body);
  INSERT INTO search_fts_trgm (search_fts_trgm, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
  INSERT INTO search_fts_trgm (rowid, title, body) VALUES (new.seq, new.title, new.body);
END;

-- Each source's upsert skips rows whose indexed text and project did not change, so status moves
-- and lease renewals never rewrite the FTS indexes.

-- Projects: a soft-deleted project leaves the index (and searches hide whatever belongs to it).
-- The key is in the body so a search for it finds the project.
CREATE TRIGGER search_projects_ai AFTER INSERT ON projects WHEN new.deleted_at IS NULL BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'project', new.id, new.id, new.title, new.key || char(10) || new.summary || char(10) || new.description);
END;
CREATE TRIGGER search_projects_au AFTER UPDATE OF key, title, summary, description, deleted_at ON projects BEGIN
  DELETE FROM search_docs WHERE object_type = 'project' AND object_id = old.id AND new.deleted_at IS NOT NULL;
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  SELECT new.tenant_id, 'project', new.id, new.id, new.title, new.key || char(10) || new.summary || char(10) || new.description
  WHERE new.deleted_at IS NULL
  ON CONFLICT (object_type, object_id) DO UPDATE SET title = excluded.title, body = excluded.body
  WHERE title IS NOT excluded.title OR body IS NOT excluded.body;
END;
CREATE TRIGGER search_projects_ad AFTER DELETE ON projects BEGIN
  DELETE FROM search_docs WHERE object_type = 'project' AND object_id = old.id;
END;

-- Tasks: cancelled and done tasks stay findable; they are closed work, not deleted work.
CREATE TRIGGER search_tasks_ai AFTER INSERT ON tasks BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'task', new.id, new.project_id, new.title, new.body);
END;
CREATE TRIGGER search_tasks_au AFTER UPDATE OF title, body, project_id ON tasks BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'task', new.id, new.project_id, new.title, new.body)
  ON CONFLICT (object_type, object_id) DO UPDATE SET title = excluded.title, body = excluded.body, project_id = excluded.project_id
  WHERE title IS NOT excluded.title OR body IS NOT excluded.body OR project_id IS NOT excluded.project_id;
END;
CREATE TRIGGER search_tasks_ad AFTER DELETE ON tasks BEGIN
  DELETE FROM search_docs WHERE object_type = 'task' AND object_id = old.id;
END;

-- Decisions are append-only (0007 refuses content edits and deletes), so inserting is enough.
CREATE TRIGGER search_decisions_ai AFTER INSERT ON decisions BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'decision', new.id, new.project_id, new.title, new.choice || char(10) || new.context || char(10) || new.rationale);
END;

CREATE TRIGGER search_notes_ai AFTER INSERT ON knowledge_notes BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'note', new.id, new.project_id, new.title, new.body);
END;
CREATE TRIGGER search_notes_au AFTER UPDATE OF title, body, project_id ON knowledge_notes BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'note', new.id, new.project_id, new.title, new.body)
  ON CONFLICT (object_type, object_id) DO UPDATE SET title = excluded.title, body = excluded.body, project_id = excluded.project_id
  WHERE title IS NOT excluded.title OR body IS NOT excluded.body OR project_id IS NOT excluded.project_id;
END;
CREATE TRIGGER search_notes_ad AFTER DELETE ON knowledge_notes BEGIN
  DELETE FROM search_docs WHERE object_type = 'note' AND object_id = old.id;
END;

-- Comments have no title; the search shows the start of the body instead. Their project is the
-- commented object's, resolved once here so the project filter needs no join per hit.
CREATE TRIGGER search_comments_ai AFTER INSERT ON comments BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'comment', new.id, CASE new.object_type
      WHEN 'project' THEN new.object_id
      WHEN 'task' THEN (SELECT project_id FROM tasks WHERE id = new.object_id)
      WHEN 'decision' THEN (SELECT project_id FROM decisions WHERE id = new.object_id)
      WHEN 'work_request' THEN (SELECT related_project_id FROM handoffs WHERE id = new.object_id)
      WHEN 'note' THEN (SELECT project_id FROM knowledge_notes WHERE id = new.object_id)
    END, '', new.body);
END;
CREATE TRIGGER search_comments_au AFTER UPDATE OF body ON comments BEGIN
  UPDATE search_docs SET body = new.body WHERE object_type = 'comment' AND object_id = new.id AND body IS NOT new.body;
END;
CREATE TRIGGER search_comments_ad AFTER DELETE ON comments BEGIN
  DELETE FROM search_docs WHERE object_type = 'comment' AND object_id = old.id;
END;

-- Handoffs: resolved and cancelled ones stay findable, like closed tasks.
CREATE TRIGGER search_handoffs_ai AFTER INSERT ON handoffs BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'work_request', new.id, new.related_project_id, new.title, new.body);
END;
CREATE TRIGGER search_handoffs_au AFTER UPDATE OF title, body, related_project_id ON handoffs BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'work_request', new.id, new.related_project_id, new.title, new.body)
  ON CONFLICT (object_type, object_id) DO UPDATE SET title = excluded.title, body = excluded.body, project_id = excluded.project_id
  WHERE title IS NOT excluded.title OR body IS NOT excluded.body OR project_id IS NOT excluded.project_id;
END;
CREATE TRIGGER search_handoffs_ad AFTER DELETE ON handoffs BEGIN
  DELETE FROM search_docs WHERE object_type = 'work_request' AND object_id = old.id;
END;

-- Change events: the entity path is the title, the change type and reasoning the body. Diffs
-- stay out: they can be 32 KB of code each, would double the ledger's write cost, and
-- change_search already finds substrings in them. events.project is a free-text name, not a
-- project id, so events carry no project.
CREATE TRIGGER search_events_ai AFTER INSERT ON events BEGIN
  INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
  VALUES (new.tenant_id, 'event', new.id, NULL, new.entity_path, new.change_type || ': ' || new.reasoning);
END;
CREATE TRIGGER search_events_au AFTER UPDATE OF entity_path, change_type, reasoning ON events BEGIN
  UPDATE search_docs SET title = new.entity_path, body = new.change_type || ': ' || new.reasoning
  WHERE object_type = 'event' AND object_id = new.id
    AND (title IS NOT new.entity_path OR body IS NOT new.change_type || ': ' || new.reasoning);
END;
CREATE TRIGGER search_events_ad AFTER DELETE ON events BEGIN
  DELETE FROM search_docs WHERE object_type = 'event' AND object_id = old.id;
END;

-- Backfill what existed before this migration (search_docs_ai indexes each row).
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT tenant_id, 'project', id, id, title, key || char(10) || summary || char(10) || description FROM projects WHERE deleted_at IS NULL;
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT tenant_id, 'task', id, project_id, title, body FROM tasks;
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT tenant_id, 'decision', id, project_id, title, choice || char(10) || context || char(10) || rationale FROM decisions;
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT tenant_id, 'note', id, project_id, title, body FROM knowledge_notes;
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT c.tenant_id, 'comment', c.id, CASE c.object_type
    WHEN 'project' THEN c.object_id
    WHEN 'task' THEN (SELECT project_id FROM tasks WHERE id = c.object_id)
    WHEN 'decision' THEN (SELECT project_id FROM decisions WHERE id = c.object_id)
    WHEN 'work_request' THEN (SELECT related_project_id FROM handoffs WHERE id = c.object_id)
    WHEN 'note' THEN (SELECT project_id FROM knowledge_notes WHERE id = c.object_id)
  END, '', c.body
FROM comments c;
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT tenant_id, 'work_request', id, related_project_id, title, body FROM handoffs;
INSERT INTO search_docs (tenant_id, object_type, object_id, project_id, title, body)
SELECT tenant_id, 'event', id, NULL, entity_path, change_type || ': ' || reasoning FROM events;
