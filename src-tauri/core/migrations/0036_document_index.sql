-- Search over the owner's documents: folders the owner adds in the app, the text of each file
-- Hearth could read in them, indexed by FTS5 (bm25 ranking, snippet() for the matched passage),
-- and a note for each file it could not read, which the Documents screen shows.
--
-- Each file keeps its size, modification time and content hash, so a rescan reads again only
-- what changed and removes what is gone. The index is external-content, kept in step by
-- triggers (as memories_fts, migration 0020): a removed file leaves the index in the statement
-- that deletes it, including through the folder's ON DELETE CASCADE.
CREATE TABLE doc_folders (
    id       INTEGER PRIMARY KEY,
    -- Canonical (absolute, links resolved) when added.
    path     TEXT NOT NULL UNIQUE,
    added_at INTEGER NOT NULL,
    -- When the last full pass over the folder ended (NULL until the first).
    scanned_at INTEGER
) STRICT;

CREATE TABLE doc_files (
    id         INTEGER PRIMARY KEY,
    folder_id  INTEGER NOT NULL REFERENCES doc_folders(id) ON DELETE CASCADE,
    path       TEXT NOT NULL UNIQUE,
    title      TEXT NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ms   INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    body       TEXT NOT NULL,
    indexed_at INTEGER NOT NULL
) STRICT;
CREATE INDEX doc_files_folder ON doc_files(folder_id);

CREATE VIRTUAL TABLE doc_files_fts USING fts5(title, body, content = 'doc_files', content_rowid = 'id', tokenize = 'porter unicode61');

CREATE TRIGGER doc_files_indexed AFTER INSERT ON doc_files BEGIN
    INSERT INTO doc_files_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
END;
CREATE TRIGGER doc_files_unindexed AFTER DELETE ON doc_files BEGIN
    INSERT INTO doc_files_fts (doc_files_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
END;
CREATE TRIGGER doc_files_reindexed AFTER UPDATE OF title, body ON doc_files BEGIN
    INSERT INTO doc_files_fts (doc_files_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
    INSERT INTO doc_files_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
END;

-- Files Hearth did not index, and why. Size and time are kept so an unchanged file is not read
-- again on every pass only to be skipped again.
CREATE TABLE doc_skipped (
    folder_id INTEGER NOT NULL REFERENCES doc_folders(id) ON DELETE CASCADE,
    path      TEXT NOT NULL UNIQUE,
    size      INTEGER NOT NULL,
    mtime_ms  INTEGER NOT NULL,
    reason    TEXT NOT NULL CHECK (reason IN ('too_large', 'binary', 'unsupported', 'unreadable')),
    note      TEXT NOT NULL,
    seen_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX doc_skipped_folder ON doc_skipped(folder_id);
