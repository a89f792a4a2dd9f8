-- Memory (issue 14): facts the owner (or the agent, on the owner's word) asked Hearth to keep,
-- indexed by SQLite's FTS5 (in the bundled SQLite) so each model request carries only the
-- relevant ones, ranked by bm25. The index is external-content, kept in step by triggers: a
-- forgotten fact leaves the index in the statement that deletes it.
CREATE TABLE memories (
    id         INTEGER PRIMARY KEY,
    -- The operation that made it (a tool call's key, or the owner's screen and a fresh id), so a
    -- retried call keeps one fact.
    key        TEXT NOT NULL UNIQUE,
    text       TEXT NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('owner', 'agent')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE VIRTUAL TABLE memories_fts USING fts5(text, content = 'memories', content_rowid = 'id', tokenize = 'porter unicode61');

CREATE TRIGGER memories_indexed AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;
CREATE TRIGGER memories_unindexed AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
    DELETE FROM memory_uses WHERE memory_id = OLD.id;
END;
CREATE TRIGGER memories_reindexed AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
    INSERT INTO memories_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;

-- Which facts went into which model request (the Memory screen shows it).
CREATE TABLE memory_uses (
    request_id TEXT NOT NULL,
    memory_id  INTEGER NOT NULL,
    thread_id  TEXT,
    task_id    TEXT,
    used_at    INTEGER NOT NULL,
    PRIMARY KEY (request_id, memory_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX memory_uses_at ON memory_uses(used_at);
