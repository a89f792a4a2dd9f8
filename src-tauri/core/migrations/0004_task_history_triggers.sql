-- Every status change writes its history in the same statement: the run row opens when a
-- lease is taken, closes when the task leaves `running`, and every status change appends an
-- event carrying the note its writer set. No code path can change a task without a trace,
-- and each transition is one statement (one commit) instead of four.

ALTER TABLE tasks ADD COLUMN current_run_id TEXT;
ALTER TABLE tasks ADD COLUMN status_note TEXT NOT NULL DEFAULT '';

CREATE TRIGGER tasks_created AFTER INSERT ON tasks
BEGIN
    INSERT INTO task_events (task_id, run_id, kind, message, at)
    VALUES (NEW.id, NULL, 'status', NEW.status_note, NEW.updated_at);
END;

CREATE TRIGGER tasks_run_opened AFTER UPDATE OF lease_id ON tasks
WHEN NEW.status = 'running' AND NEW.lease_id IS NOT OLD.lease_id
BEGIN
    INSERT INTO task_runs (id, task_id, lease_id, attempt, owner, status, started_at)
    VALUES (NEW.current_run_id, NEW.id, NEW.lease_id, NEW.attempts, coalesce(NEW.lease_owner, ''), 'running', NEW.updated_at);
END;

CREATE TRIGGER tasks_run_closed AFTER UPDATE OF status ON tasks
WHEN OLD.status = 'running' AND NEW.status <> 'running'
BEGIN
    UPDATE task_runs
    SET status = CASE NEW.status
            WHEN 'failed' THEN 'failed'
            WHEN 'interrupted' THEN 'interrupted'
            WHEN 'cancelled' THEN 'cancelled'
            WHEN 'paused' THEN 'cancelled'
            ELSE 'finished' END,
        finished_at = NEW.updated_at,
        reason = NULLIF(NEW.status_note, '')
    WHERE lease_id = OLD.lease_id AND status = 'running';
END;

CREATE TRIGGER tasks_status_history AFTER UPDATE OF status ON tasks
WHEN OLD.status IS NOT NEW.status OR OLD.lease_id IS NOT NEW.lease_id
BEGIN
    INSERT INTO task_events (task_id, run_id, kind, message, at)
    VALUES (
        NEW.id,
        CASE WHEN NEW.status = 'running' OR OLD.status = 'running' THEN NEW.current_run_id END,
        CASE NEW.status WHEN 'succeeded' THEN 'result' WHEN 'failed' THEN 'error' ELSE 'status' END,
        NEW.status_note,
        NEW.updated_at
    );
END;
