-- Plug-in tools (issue 35): the MCP servers the owner added, and what each of their tools may
-- do. A tool with no row in mcp_tool_policies is off: plug-in tools are denied by default
-- (invariant 19), so "off" is never written, only the absence of a row. A policy holds for the
-- tool as the owner saw it (`fingerprint`) and for the server as it was reached: changing how a
-- server is reached forgets its policies. The secret parts of a
-- server (its environment's values, its bearer token) are sealed in the vault, never here.
CREATE TABLE mcp_servers (
    name        TEXT PRIMARY KEY,
    -- How it is reached, without secret values (hearth_protocol::mcp::McpTransportView as JSON).
    transport   TEXT NOT NULL,
    -- A hash of how it is reached, its sealed secrets included: saving another one forgets
    -- what was allowed of the old.
    reach       TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE mcp_tool_policies (
    server      TEXT NOT NULL REFERENCES mcp_servers(name) ON DELETE CASCADE,
    tool        TEXT NOT NULL,
    policy      TEXT NOT NULL CHECK (policy IN ('allowed', 'ask')),
    -- What the server said about the tool when the owner chose (a hash of its description,
    -- schema and hints): a tool that says something else since is off until the owner looks again.
    fingerprint TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
) STRICT;

-- A held call of a plug-in tool is an 'agent.call' proposal whose draft names the tool as
-- {server, tool}; its notice says so rather than speaking of outside content.
DROP TRIGGER proposals_notify;
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

-- A standing order may cover one plug-in tool (grant kind 'plugin_tool', the tool's wire name in
-- `origin`), so a task can call it without a card within the order's count and life. As in 0027,
-- SQLite cannot change a CHECK constraint in place: `mandates` and `mandate_uses` (which refers to
-- it) are rebuilt with every column, index and row they had.
CREATE TABLE mandates_new (
    id           TEXT PRIMARY KEY,
    holder_kind  TEXT NOT NULL CHECK (holder_kind IN ('task', 'schedule')),
    holder_id    TEXT NOT NULL,
    grant_kind   TEXT NOT NULL CHECK (grant_kind IN
        ('computer_commands', 'site_actions', 'remember_facts', 'send_mail', 'send_forms', 'plugin_tool')),
    origin       TEXT,
    recipients   TEXT CHECK (recipients IS NULL OR json_valid(recipients)),
    max_uses     INTEGER NOT NULL CHECK (max_uses > 0),
    window_ms    INTEGER NOT NULL CHECK (window_ms >= 0),
    uses         INTEGER NOT NULL DEFAULT 0,
    window_start INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    CHECK ((grant_kind = 'send_mail') = (recipients IS NOT NULL))
);
INSERT INTO mandates_new (id, holder_kind, holder_id, grant_kind, origin, recipients, max_uses, window_ms, uses,
                          window_start, expires_at, created_at, revoked_at)
    SELECT id, holder_kind, holder_id, grant_kind, origin, recipients, max_uses, window_ms, uses,
           window_start, expires_at, created_at, revoked_at FROM mandates;

CREATE TABLE mandate_uses_new (
    mandate_id TEXT NOT NULL REFERENCES mandates_new(id),
    op_scope   TEXT NOT NULL,
    op_id      TEXT NOT NULL,
    tool       TEXT NOT NULL,
    used_at    INTEGER NOT NULL,
    PRIMARY KEY (op_scope, op_id)
);
INSERT INTO mandate_uses_new SELECT mandate_id, op_scope, op_id, tool, used_at FROM mandate_uses;

DROP TABLE mandate_uses;
DROP TABLE mandates;
ALTER TABLE mandates_new RENAME TO mandates;
ALTER TABLE mandate_uses_new RENAME TO mandate_uses;
CREATE INDEX mandates_holder ON mandates (holder_kind, holder_id);
CREATE INDEX mandate_uses_mandate ON mandate_uses (mandate_id);
