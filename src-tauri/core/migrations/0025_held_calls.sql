-- Read content cannot act (issue 31): a tool call the agent asks for after reading content from
-- outside the owner waits on a card, as a proposal of kind 'agent.call', and every proposal
-- records the outside content that was in the agent's context (`sources`, a JSON array of
-- {kind, detail}). SQLite cannot change a CHECK constraint in place, so the table is rebuilt
-- with every column it has after 0017; nothing refers to proposals by foreign key.
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
        CHECK (origin IN ('owner_chat', 'task', 'agui_endpoint', 'external_agent')),
    executor       TEXT,
    request_hash   TEXT,
    sources        TEXT NOT NULL DEFAULT '[]'
) STRICT;

INSERT INTO proposals_new (id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
                           created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash)
    SELECT id, key, task_id, kind, draft, connection_id, account, target, target_version, hash, status,
           created_at, expires_at, decided_at, receipt, error, origin, executor, request_hash FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_new RENAME TO proposals;
CREATE INDEX proposals_status ON proposals(status, created_at);
CREATE INDEX proposals_task ON proposals(task_id);

-- Dropping the table dropped its trigger: the same notice, now also for a held call (and a web
-- form's title read from the draft's own spelling, `pageTitle`).
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
