-- A schedule can repeat a statement summary (issue 36, point 6): `job` gains 'finance', whose
-- runs summarize the document (a path in the owner's folders) its `instructions` name. SQLite
-- cannot change a CHECK constraint in place, so the table is rebuilt with every column it had
-- after 0028; its one index is made again as it was. Nothing refers to schedules by foreign
-- key, and no trigger is defined on it.
CREATE TABLE schedules_new (
    id              TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    title           TEXT NOT NULL,
    job             TEXT NOT NULL CHECK (job IN ('reminder', 'agent', 'finance')),
    instructions    TEXT NOT NULL,
    rule            TEXT NOT NULL,
    time_zone       TEXT NOT NULL,
    missed          TEXT NOT NULL CHECK (missed IN ('skip', 'run_once', 'run_each')),
    status          TEXT NOT NULL CHECK (status IN ('active', 'paused')),
    anchor_at       INTEGER NOT NULL,
    cursor_at       INTEGER NOT NULL,
    next_due_at     INTEGER,
    thread_id       TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    goal_id         TEXT,
    sources         TEXT NOT NULL DEFAULT '[]'
) STRICT;

INSERT INTO schedules_new (id, idempotency_key, title, job, instructions, rule, time_zone, missed, status, anchor_at,
                           cursor_at, next_due_at, thread_id, created_at, updated_at, goal_id, sources)
SELECT id, idempotency_key, title, job, instructions, rule, time_zone, missed, status, anchor_at,
       cursor_at, next_due_at, thread_id, created_at, updated_at, goal_id, sources
  FROM schedules;

DROP TABLE schedules;
ALTER TABLE schedules_new RENAME TO schedules;
CREATE INDEX schedules_due ON schedules(next_due_at) WHERE status = 'active';
