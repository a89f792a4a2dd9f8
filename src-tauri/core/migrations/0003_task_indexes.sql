-- Indexes shaped like the engine's two hottest queries, so neither scans finished tasks:
-- the cap on unfinished tasks (checked on every create) and "the next due task" (every claim).
CREATE INDEX tasks_open ON tasks(status) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX tasks_next_due ON tasks(coalesce(next_run_at, created_at), id) WHERE status IN ('queued', 'scheduled');
