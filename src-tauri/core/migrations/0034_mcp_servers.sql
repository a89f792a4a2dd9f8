-- Plug-in tools (issue 35): the MCP servers the owner added, and what each of their tools may
-- do. A tool with no row in mcp_tool_policies is off: plug-in tools are denied by default
-- (invariant 19), so "off" is never written, only the absence of a row. The secret parts of a
-- server (its environment's values, its bearer token) are sealed in the vault, never here.
CREATE TABLE mcp_servers (
    name        TEXT PRIMARY KEY,
    -- How it is reached, without secret values (hearth_protocol::mcp::McpTransportView as JSON).
    transport   TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE mcp_tool_policies (
    server      TEXT NOT NULL REFERENCES mcp_servers(name) ON DELETE CASCADE,
    tool        TEXT NOT NULL,
    policy      TEXT NOT NULL CHECK (policy IN ('allowed', 'ask')),
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
