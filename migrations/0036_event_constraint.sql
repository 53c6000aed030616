-- Seed 000's `constraint`: what the change must keep holding (a limit, an invariant), stored on
-- the event, returned on every row and found by change_search. The trigram index is rebuilt with
-- it as a fifth column, so a search stays index-backed.
ALTER TABLE events ADD COLUMN "constraint" TEXT NOT NULL DEFAULT '';

DROP TRIGGER events_fts_ai;
DROP TRIGGER events_fts_ad;
DROP TRIGGER events_fts_au;
DROP TABLE events_fts;
CREATE VIRTUAL TABLE events_fts USING fts5 (
  entity_path, diff, reasoning, agent, "constraint",
  content = 'events', content_rowid = 'seq', tokenize = 'trigram'
);
CREATE TRIGGER events_fts_ai AFTER INSERT ON events BEGIN
  INSERT INTO events_fts (rowid, entity_path, diff, reasoning, agent, "constraint")
  VALUES (new.seq, new.entity_path, new.diff, new.reasoning, new.agent, new."constraint");
END;
CREATE TRIGGER events_fts_ad AFTER DELETE ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, entity_path, diff, reasoning, agent, "constraint")
  VALUES ('delete', old.seq, old.entity_path, old.diff, old.reasoning, old.agent, old."constraint");
END;
CREATE TRIGGER events_fts_au AFTER UPDATE ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, entity_path, diff, reasoning, agent, "constraint")
  VALUES ('delete', old.seq, old.entity_path, old.diff, old.reasoning, old.agent, old."constraint");
  INSERT INTO events_fts (rowid, entity_path, diff, reasoning, agent, "constraint")
  VALUES (new.seq, new.entity_path, new.diff, new.reasoning, new.agent, new."constraint");
END;
INSERT INTO events_fts (events_fts) VALUES ('rebuild');
