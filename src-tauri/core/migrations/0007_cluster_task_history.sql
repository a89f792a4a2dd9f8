-- Task history clustered by task: each table is one B-tree keyed by (task, order), so a
-- transition writes fewer pages (runs had three B-trees, events two) and a task's history
-- reads as one range. Lookups that used the lease id now use (task, attempt).

DROP TRIGGER tasks_created;
DROP TRIGGER tasks_run_opened;
DROP TRIGGER tasks_run_closed;
DROP TRIGGER tasks_status_history;

CREATE TABLE task_runs_clustered (
    task_id     TEXT NOT NULL REFERENCES tasks(id),
    attempt     INTEGER NOT NULL,
    id          TEXT NOT NULL,
    lease_id    TEXT NOT NULL,
    owner       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed', 'cancelled')),
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    reason      TEXT,
    PRIMARY KEY (task_id, attempt)
) STRICT, WITHOUT ROWID;
INSERT INTO task_runs_clustered (task_id, attempt, id, lease_id, owner, status, started_at, finished_at, reason)
    SELECT task_id, attempt, id, lease_id, owner, status, started_at, finished_at, reason FROM task_runs;
DROP TABLE task_runs;
ALTER TABLE task_runs_clustered RENAME TO task_runs;

CREATE TABLE task_events_clustered (
    task_id TEXT NOT NULL REFERENCES tasks(id),
    seq     INTEGER NOT NULL,
    run_id  TEXT,
    kind    TEXT NOT NULL CHECK (kind IN ('plan', 'step', 'observation', 'approval', 'result', 'error', 'status')),
    message TEXT NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO task_events_clustered (task_id, seq, run_id, kind, message, at)
    SELECT task_id, id, run_id, kind, message, at FROM task_events;
DROP TABLE task_events;
ALTER TABLE task_events_clustered RENAME TO task_events;

CREATE TRIGGER tasks_created AFTER INSERT ON tasks
BEGIN
    INSERT INTO task_events (task_id, seq, run_id, kind, message, at)
    VALUES (NEW.id, 1, NULL, 'status', NEW.status_note, NEW.updated_at);
END;

CREATE TRIGGER tasks_run_opened AFTER UPDATE OF lease_id ON tasks
WHEN NEW.status = 'running' AND NEW.lease_id IS NOT OLD.lease_id
BEGIN
    INSERT INTO task_runs (task_id, attempt, id, lease_id, owner, status, started_at)
    VALUES (NEW.id, NEW.attempts, NEW.current_run_id, NEW.lease_id, coalesce(NEW.lease_owner, ''), 'running', NEW.updated_at);
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
    WHERE task_id = OLD.id AND attempt = OLD.attempts AND status = 'running';
END;

CREATE TRIGGER tasks_status_history AFTER UPDATE OF status ON tasks
WHEN OLD.status IS NOT NEW.status OR OLD.lease_id IS NOT NEW.lease_id
BEGIN
    INSERT INTO task_events (task_id, seq, run_id, kind, message, at)
    VALUES (
        NEW.id,
        (SELECT coalesce(max(seq), 0) + 1 FROM task_events WHERE task_id = NEW.id),
        CASE WHEN NEW.status = 'running' OR OLD.status = 'running' THEN NEW.current_run_id END,
        CASE NEW.status WHEN 'succeeded' THEN 'result' WHEN 'failed' THEN 'error' ELSE 'status' END,
        NEW.status_note,
        NEW.updated_at
    );
END;
