-- Schedules (issue 14): a rule in a time zone, a cursor (every due time at or before it has been
-- handled) and the next due time. Each due time is one `schedule_runs` row, keyed by
-- (schedule, due time), written in the same transaction as the compare-and-swap on the cursor
-- and the task it makes: two processes ticking together make one run per due time.
CREATE TABLE schedules (
    id              TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    title           TEXT NOT NULL,
    job             TEXT NOT NULL CHECK (job IN ('reminder', 'agent')),
    instructions    TEXT NOT NULL,
    -- hearth_protocol::schedules::Repeat as JSON.
    rule            TEXT NOT NULL,
    time_zone       TEXT NOT NULL,
    missed          TEXT NOT NULL CHECK (missed IN ('skip', 'run_once', 'run_each')),
    status          TEXT NOT NULL CHECK (status IN ('active', 'paused')),
    anchor_at       INTEGER NOT NULL,
    cursor_at       INTEGER NOT NULL,
    next_due_at     INTEGER,
    thread_id       TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX schedules_due ON schedules(next_due_at) WHERE status = 'active';

CREATE TABLE schedule_runs (
    schedule_id TEXT NOT NULL,
    due_at      INTEGER NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('started', 'made_up', 'skipped', 'run_now', 'refused')),
    task_id     TEXT,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (schedule_id, due_at)
) STRICT, WITHOUT ROWID;

-- The schedule a task was made by (its failure is a schedule failure).
ALTER TABLE tasks ADD COLUMN schedule_id TEXT;

-- The owner's inbox. A key says what a notice is about, so the same event (a task's failure in
-- one attempt, one proposal awaiting review) is one notice however often it is written.
CREATE TABLE notifications (
    id          INTEGER PRIMARY KEY,
    key         TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('task', 'proposal', 'schedule')),
    target_id   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    read_at     INTEGER
) STRICT;
CREATE INDEX notifications_unread ON notifications(id) WHERE read_at IS NULL;

-- Written by triggers, like task history: no code path can finish, fail or stop a task, or put a
-- proposal in front of the owner, without the notice.
CREATE TRIGGER tasks_notify AFTER UPDATE OF status ON tasks
WHEN OLD.status IS NOT NEW.status AND NEW.status IN ('succeeded', 'failed', 'waiting_input', 'interrupted')
BEGIN
    INSERT OR IGNORE INTO notifications (key, kind, title, body, target_kind, target_id, created_at)
    VALUES (
        'task:' || NEW.id || ':' || NEW.status || ':' || NEW.attempts,
        CASE
            WHEN NEW.status = 'succeeded' AND NEW.kind = 'reminder' THEN 'reminder'
            WHEN NEW.status = 'succeeded' THEN 'task_done'
            WHEN NEW.status = 'failed' AND NEW.schedule_id IS NOT NULL THEN 'schedule_failed'
            WHEN NEW.status = 'failed' THEN 'task_failed'
            WHEN NEW.status = 'waiting_input' THEN 'input_needed'
            ELSE 'task_interrupted'
        END,
        substr(NEW.title, 1, 200),
        substr(CASE NEW.status
            WHEN 'succeeded' THEN coalesce(NEW.result, 'Done.')
            WHEN 'failed' THEN coalesce(NEW.error, 'It failed.')
            WHEN 'waiting_input' THEN coalesce(NEW.question, 'It has a question.')
            ELSE coalesce(NEW.error, 'It stopped during a run; review what it did.')
        END, 1, 500),
        'task', NEW.id, NEW.updated_at);
END;

CREATE TRIGGER proposals_notify AFTER INSERT ON proposals
WHEN NEW.status = 'awaiting_review'
BEGIN
    INSERT OR IGNORE INTO notifications (key, kind, title, body, target_kind, target_id, created_at)
    VALUES (
        'review:' || NEW.id,
        'review_needed',
        CASE NEW.kind
            WHEN 'email.send' THEN 'Review an email before it is sent'
            WHEN 'calendar.create' THEN 'Review a new event'
            WHEN 'calendar.update' THEN 'Review a change to an event'
            WHEN 'calendar.delete' THEN 'Review an event''s deletion'
            ELSE 'Review a form before it is sent'
        END,
        substr(CASE
            WHEN NEW.kind = 'email.send' THEN 'To ' || coalesce(json_extract(NEW.draft, '$.to[0]'), '?') || ': '
                || coalesce(json_extract(NEW.draft, '$.subject'), '')
            WHEN NEW.kind = 'web.submit' THEN coalesce(json_extract(NEW.draft, '$.page_title'), '')
            ELSE coalesce(json_extract(NEW.draft, '$.title'), '')
        END, 1, 300),
        'proposal', NEW.id, NEW.created_at);
END;
