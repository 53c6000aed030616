-- task_query and claim-next filtered by a label walk the claim order (priority, created_at, id)
-- and test each task's labels, so a label held only by low-priority tasks makes them pass every
-- task above it first: the cost grows with the project, not with the page. Each (task, label)
-- pair is kept here with the task's status and its place in that order, indexed per project and
-- per tenant, with and without the status (claim-next asks for one status, task_query for any),
-- so a label's page is one ordered range. The triggers keep it in step with every write of a
-- task's labels, status, priority or project, whatever statement makes it.
CREATE TABLE task_labels (
  tenant_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  label TEXT NOT NULL,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  task_id TEXT NOT NULL,
  PRIMARY KEY (task_id, label)
);
CREATE INDEX task_labels_project_order_idx ON task_labels (tenant_id, project_id, label, priority, created_at, task_id);
CREATE INDEX task_labels_tenant_order_idx ON task_labels (tenant_id, label, priority, created_at, task_id);
CREATE INDEX task_labels_project_status_order_idx ON task_labels (tenant_id, project_id, label, status, priority, created_at, task_id);
CREATE INDEX task_labels_tenant_status_order_idx ON task_labels (tenant_id, label, status, priority, created_at, task_id);

INSERT INTO task_labels (tenant_id, project_id, label, status, priority, created_at, task_id)
SELECT DISTINCT t.tenant_id, t.project_id, l.value, t.status, t.priority, t.created_at, t.id FROM tasks t, json_each(t.labels) l WHERE json_valid(t.labels) AND l.type = 'text';

CREATE TRIGGER tasks_labels_insert AFTER INSERT ON tasks WHEN NEW.labels <> '[]' AND json_valid(NEW.labels) BEGIN
  INSERT OR IGNORE INTO task_labels (tenant_id, project_id, label, status, priority, created_at, task_id)
  SELECT NEW.tenant_id, NEW.project_id, value, NEW.status, NEW.priority, NEW.created_at, NEW.id FROM json_each(NEW.labels) WHERE type = 'text';
END;

CREATE TRIGGER tasks_labels_update AFTER UPDATE OF labels, status, priority, project_id, created_at ON tasks BEGIN
  DELETE FROM task_labels WHERE task_id = OLD.id;
  INSERT OR IGNORE INTO task_labels (tenant_id, project_id, label, status, priority, created_at, task_id)
  SELECT NEW.tenant_id, NEW.project_id, value, NEW.status, NEW.priority, NEW.created_at, NEW.id FROM json_each(CASE WHEN json_valid(NEW.labels) THEN NEW.labels ELSE '[]' END) WHERE type = 'text';
END;

CREATE TRIGGER tasks_labels_delete AFTER DELETE ON tasks BEGIN
  DELETE FROM task_labels WHERE task_id = OLD.id;
END;
