-- Undo send (issue 36): an approved email or event change waits out the owner's undo window
-- as 'leaving' (until `leaves_at`) before it is carried out, and Undo makes it 'undone' with
-- nothing performed. SQLite cannot change a CHECK constraint in place, so the table is rebuilt
-- with every column it had after 0027 (as 0025 did); its indexes and triggers go with it and
-- are made again below exactly as they were. Nothing refers to proposals by foreign key.
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
        ('awaiting_review', 'leaving', 'undone', 'executing', 'succeeded', 'failed', 'outcome_unknown', 'denied',
         'expired')),
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
    mandate_id     TEXT,
    leaves_at      INTEGER,
    CHECK ((status = 'leaving') = (leaves_at IS NOT NULL))
) STRICT;

INSERT INTO proposals_new (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status, created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash, sources, mandate_id)
    SELECT id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status, created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash, sources, mandate_id FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_new RENAME TO proposals;
CREATE INDEX proposals_status ON proposals(status, created_at);
CREATE INDEX proposals_task ON proposals(task_id);
-- The sweep that carries out what is due, and start-up's look for windows a crash cut short.
CREATE INDEX proposals_leaving ON proposals(leaves_at) WHERE status = 'leaving';

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
            WHEN 'agent.call' THEN CASE json_type(NEW.draft, '$.tool')
                WHEN 'object' THEN 'Review a call to a plug-in tool (' || coalesce(json_extract(NEW.draft, '$.tool.server'), '?') || ')'
                ELSE 'Review what the agent asked to do after reading outside content'
            END
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

-- The notice that carries Undo: one per approval that waits out a window.
CREATE TRIGGER proposals_leaving_notify AFTER UPDATE OF status ON proposals
WHEN NEW.status = 'leaving' AND OLD.status <> 'leaving'
BEGIN
    INSERT OR IGNORE INTO notifications (key, kind, title, body, target_kind, target_id, created_at)
    VALUES (
        'leaving:' || NEW.id || ':' || coalesce(NEW.decided_at, 0),
        'leaving',
        CASE NEW.kind
            WHEN 'email.send' THEN 'Your approved email leaves in a few seconds'
            ELSE 'Your approved event change is made in a few seconds'
        END,
        'Undo it before then and nothing is sent or changed.',
        'proposal', NEW.id, coalesce(NEW.decided_at, NEW.created_at));
END;
