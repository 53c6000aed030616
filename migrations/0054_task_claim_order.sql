-- Claim-next takes the best claimable task of a project, or of the whole tenant, by priority, then
-- created_at, then id; task_query's default page lists a project's tasks in that same order. With
-- an index in that order each walks it and stops at the first task it keeps, where without one it
-- sorts every task in scope, which grows with the project. The project-and-status index replaces
-- tasks_tenant_project_status_idx, which is its prefix.
DROP INDEX tasks_tenant_project_status_idx;
CREATE INDEX tasks_project_status_order_idx ON tasks (tenant_id, project_id, status, priority, created_at, id);
CREATE INDEX tasks_status_order_idx ON tasks (tenant_id, status, priority, created_at, id);
CREATE INDEX tasks_project_order_idx ON tasks (tenant_id, project_id, priority, created_at, id);
