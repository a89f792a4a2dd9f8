-- A task's form submission is reviewed like a send (issue 12): proposals.kind gains
-- 'web.submit'. SQLite cannot change a CHECK constraint in place, so the table is rebuilt with
-- every column it has after 0010 and 0011; nothing refers to proposals by foreign key.
CREATE TABLE proposals_new (
    id             TEXT PRIMARY KEY,
    key            TEXT NOT NULL UNIQUE,
    task_id        TEXT REFERENCES tasks(id),
    kind           TEXT NOT NULL CHECK (kind IN
        ('email.send', 'calendar.create', 'calendar.update', 'calendar.delete', 'web.submit')),
    draft          TEXT NOT NULL,
    connection_id  TEXT NOT NULL,
    account        TEXT NOT NULL,
    target         TEXT NOT NULL,
    target_version TEXT NOT NULL,
    hash           TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN
        ('awaiting_review', 'executing', 'succeeded', 'failed', 'outcome_unknown', 'denied', 'expired')),
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    decided_at     INTEGER,
    receipt        TEXT,
    error          TEXT,
    origin         TEXT NOT NULL DEFAULT 'owner_chat'
        CHECK (origin IN ('owner_chat', 'task', 'agui_endpoint', 'external_agent')),
    executor       TEXT,
    request_hash   TEXT
) STRICT;

INSERT INTO proposals_new (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
                           created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash)
    SELECT id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
           created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_new RENAME TO proposals;
CREATE INDEX proposals_status ON proposals(status, created_at);
CREATE INDEX proposals_task ON proposals(task_id);
