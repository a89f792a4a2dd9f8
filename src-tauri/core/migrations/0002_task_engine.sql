-- The durable task engine: leases, runs, events, and the operation journal.

ALTER TABLE tasks ADD COLUMN plan TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tasks ADD COLUMN evidence TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tasks ADD COLUMN state TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
-- The lease: who runs the task now and until when. `lease_owner` names the process
-- (boot id, pid, start time) so a restart can tell a dead holder from a live one.
ALTER TABLE tasks ADD COLUMN lease_id TEXT;
ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE tasks ADD COLUMN next_run_at INTEGER;
ALTER TABLE tasks ADD COLUMN action_id TEXT;
ALTER TABLE tasks ADD COLUMN question TEXT;
ALTER TABLE tasks ADD COLUMN result TEXT;
ALTER TABLE tasks ADD COLUMN error TEXT;
ALTER TABLE tasks ADD COLUMN artifact_ids TEXT NOT NULL DEFAULT '[]';
-- 1 while effects of an interrupted run have an unknown outcome; Retry needs the owner's review.
ALTER TABLE tasks ADD COLUMN outcome_uncertain INTEGER NOT NULL DEFAULT 0;

CREATE INDEX tasks_due ON tasks(status, next_run_at);
CREATE INDEX tasks_updated ON tasks(updated_at);

-- One row per lease.
CREATE TABLE task_runs (
    id          TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL REFERENCES tasks(id),
    lease_id    TEXT NOT NULL UNIQUE,
    attempt     INTEGER NOT NULL,
    owner       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted', 'failed', 'cancelled')),
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    reason      TEXT
) STRICT;
CREATE INDEX task_runs_task ON task_runs(task_id, started_at);

CREATE TABLE task_events (
    id      INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id),
    run_id  TEXT,
    kind    TEXT NOT NULL CHECK (kind IN ('plan', 'step', 'observation', 'approval', 'result', 'error', 'status')),
    message TEXT NOT NULL,
    at      INTEGER NOT NULL
) STRICT;
CREATE INDEX task_events_task ON task_events(task_id, id);

-- The operation journal: the full normalized action is committed before its effect is
-- dispatched, so a retry finds it and a crash leaves evidence.
CREATE TABLE operations (
    scope       TEXT NOT NULL,
    op_id       TEXT NOT NULL,
    tool        TEXT NOT NULL,
    action      TEXT NOT NULL,
    action_hash TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('dispatching', 'succeeded', 'failed', 'interrupted', 'outcome_unknown', 'acknowledged')),
    receipt     TEXT,
    created_at  INTEGER NOT NULL,
    settled_at  INTEGER,
    PRIMARY KEY (scope, op_id)
) STRICT;
CREATE INDEX operations_status ON operations(scope, status);
