-- A chat sent from one of the owner's paired devices (issue 34) asks for its effects on cards
-- whose origin is 'paired_device', so the card says where the request came from. SQLite cannot
-- change a CHECK constraint in place, so the table is rebuilt with every column it has after
-- 0027 (0025's columns and `mandate_id`), its indexes and both of its triggers as they were;
-- nothing refers to proposals by foreign key. (A device's chat runs are stored with origin
-- 'window' in chat_runs: they are the owner's own conversation; the run's origin in memory is
-- what makes its calls ask.)
CREATE TABLE proposals_new (
    id             TEXT PRIMARY KEY,
    key            TEXT NOT NULL UNIQUE,
    task_id        TEXT REFERENCES tasks(id),
    kind           TEXT NOT NULL CHECK (kind IN
        ('email.send', 'calendar.create', 'calendar.update', 'calendar.delete', 'web.submit', 'agent.call')),
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
        CHECK (origin IN ('owner_chat', 'task', 'agui_endpoint', 'external_agent', 'paired_device')),
    executor       TEXT,
    request_hash   TEXT,
    sources        TEXT NOT NULL DEFAULT '[]',
    mandate_id     TEXT
) STRICT;

INSERT INTO proposals_new (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
    created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash, sources, mandate_id)
    SELECT id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
    created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash, sources, mandate_id FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_new RENAME TO proposals;
CREATE INDEX proposals_status ON proposals(status, created_at);
CREATE INDEX proposals_task ON proposals(task_id);

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
            WHEN 'agent.call' THEN 'Review what the agent asked to do after reading outside content'
            ELSE 'Review a form before it is sent'
        END,
        substr(CASE
            WHEN NEW.kind = 'email.send' THEN 'To ' || coalesce(json_extract(NEW.draft, '$.to[0]'), '?') || ': '
                || coalesce(json_extract(NEW.draft, '$.subject'), '')
            WHEN NEW.kind = 'web.submit' THEN coalesce(json_extract(NEW.draft, '$.pageTitle'), '')
            WHEN NEW.kind = 'agent.call' THEN coalesce(json_extract(NEW.draft, '$.summary'), '')
            ELSE coalesce(json_extract(NEW.draft, '$.title'), '')
        END, 1, 300),
        'proposal', NEW.id, NEW.created_at);
END;

CREATE TRIGGER proposals_mandated_doubt AFTER UPDATE OF status ON proposals
WHEN NEW.status = 'outcome_unknown' AND NEW.mandate_id IS NOT NULL AND NEW.task_id IS NOT NULL
BEGIN
    UPDATE tasks SET outcome_uncertain = 1 WHERE id = NEW.task_id;
    UPDATE tasks SET status = 'interrupted', question = NULL, lease_expires_at = NULL,
                     updated_at = coalesce(NEW.decided_at, updated_at),
                     error = 'An action of this run may or may not have happened. Check what it did, then choose "Retry after review".',
                     status_note = 'Interrupted: An action of this run may or may not have happened. Check what it did, then choose "Retry after review".'
     WHERE id = NEW.task_id AND status IN ('waiting_input', 'queued', 'scheduled', 'waiting_approval');
END;
