-- Ideas (issue 14): suggestions are computed from what Hearth holds (mail, goals, repeated
-- requests); only the owner's decision on each is stored, so a dismissed idea stays dismissed
-- and an accepted one is not offered again.
CREATE TABLE idea_decisions (
    id         TEXT PRIMARY KEY,
    decision   TEXT NOT NULL CHECK (decision IN ('accepted', 'dismissed')),
    made_id    TEXT,
    decided_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
