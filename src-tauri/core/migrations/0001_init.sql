-- Hearth's first schema: chat threads with their AG-UI event log, durable task records,
-- and the seeded local workspace (mail, attachments, calendar).

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE threads (
    id         TEXT PRIMARY KEY,
    title      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- One row per chat run; `running` rows left by a crash are closed at start-up.
CREATE TABLE chat_runs (
    id          TEXT PRIMARY KEY,
    thread_id   TEXT NOT NULL REFERENCES threads(id),
    status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled', 'failed', 'interrupted')),
    started_at  INTEGER NOT NULL,
    finished_at INTEGER
) STRICT;
CREATE INDEX chat_runs_thread ON chat_runs(thread_id);

-- The per-thread event log: every AG-UI event as the UI saw it, in order.
CREATE TABLE thread_events (
    id        INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id),
    run_id    TEXT NOT NULL REFERENCES chat_runs(id),
    event     TEXT NOT NULL
) STRICT;
CREATE INDEX thread_events_thread ON thread_events(thread_id, id);

CREATE TABLE tasks (
    id              TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    title           TEXT NOT NULL,
    status          TEXT NOT NULL,
    input           TEXT NOT NULL,
    thread_id       TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE mail_messages (
    id         TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL,
    from_addr  TEXT NOT NULL,
    to_addrs   TEXT NOT NULL,
    subject    TEXT NOT NULL,
    body       TEXT NOT NULL,
    sent_at    INTEGER NOT NULL,
    folder     TEXT NOT NULL CHECK (folder IN ('inbox', 'sent'))
) STRICT;
CREATE INDEX mail_messages_thread ON mail_messages(thread_id, sent_at);

CREATE TABLE mail_attachments (
    id         TEXT PRIMARY KEY,
    message_id TEXT NOT NULL REFERENCES mail_messages(id),
    filename   TEXT NOT NULL,
    mime_type  TEXT NOT NULL,
    size       INTEGER NOT NULL,
    path       TEXT NOT NULL
) STRICT;

CREATE TABLE calendar_events (
    id          TEXT PRIMARY KEY,
    calendar_id TEXT NOT NULL,
    title       TEXT NOT NULL,
    starts_at   INTEGER NOT NULL,
    ends_at     INTEGER NOT NULL,
    location    TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX calendar_events_range ON calendar_events(starts_at);
