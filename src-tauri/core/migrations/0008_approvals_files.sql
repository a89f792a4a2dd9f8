-- The approval gate, the owner's files, and the fields a local Sent folder and calendar
-- need to carry out an approved proposal exactly as reviewed.

ALTER TABLE mail_messages ADD COLUMN cc_addrs TEXT NOT NULL DEFAULT '';
ALTER TABLE mail_messages ADD COLUMN bcc_addrs TEXT NOT NULL DEFAULT '';
ALTER TABLE mail_messages ADD COLUMN in_reply_to TEXT;

-- A version per event: an update or delete reviewed against version n applies only to n.
ALTER TABLE calendar_events ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE calendar_events ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE calendar_events ADD COLUMN all_day INTEGER NOT NULL DEFAULT 0;
ALTER TABLE calendar_events ADD COLUMN attendees TEXT NOT NULL DEFAULT '[]';

-- PDFs under <data>/files/<id>.pdf. A deleted file keeps its row (name, hash), so a
-- proposal or receipt that mentions it stays explainable and cannot be recreated.
CREATE TABLE files (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    path       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    pages      INTEGER NOT NULL,
    fields     INTEGER NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('mail_attachment', 'filled')),
    source_ref TEXT,
    parent_id  TEXT REFERENCES files(id),
    sha256     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    deleted_at INTEGER
) STRICT;
CREATE INDEX files_created ON files(created_at);

-- What a prepare tool asked the owner to approve. `hash` covers the normalized draft, the
-- connection, the target and its version; `key` makes a retried prepare return the same row.
CREATE TABLE proposals (
    id             TEXT PRIMARY KEY,
    key            TEXT NOT NULL UNIQUE,
    task_id        TEXT REFERENCES tasks(id),
    kind           TEXT NOT NULL CHECK (kind IN ('email.send', 'calendar.create', 'calendar.update', 'calendar.delete')),
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
    error          TEXT
) STRICT;
CREATE INDEX proposals_status ON proposals(status, created_at);
CREATE INDEX proposals_task ON proposals(task_id);
