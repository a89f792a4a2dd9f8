-- The owner imports a PDF from their own disk on the Files screen: files.source gains 'disk'.
-- The table is rebuilt as in 0014 (SQLite cannot change a CHECK constraint in place),
-- parent_id again referring to the new table itself, foreign keys checked at commit.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE files_new (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    path       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    pages      INTEGER NOT NULL,
    fields     INTEGER NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('mail_attachment', 'filled', 'computer', 'web', 'disk')),
    source_ref TEXT,
    parent_id  TEXT REFERENCES files_new(id),
    sha256     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    deleted_at INTEGER
) STRICT;

INSERT INTO files_new (id, name, path, size, pages, fields, source, source_ref, parent_id, sha256, created_at, deleted_at)
    SELECT id, name, path, size, pages, fields, source, source_ref, parent_id, sha256, created_at, deleted_at FROM files;
DROP TABLE files;
ALTER TABLE files_new RENAME TO files;
CREATE INDEX files_created ON files(created_at);
