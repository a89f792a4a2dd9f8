-- The browser profile the owner picked for a chat thread or a task (`thread:<id>`, `task:<id>`),
-- instead of the one of its own. No row: its own.
CREATE TABLE browser_profile_choices (
    scope      TEXT PRIMARY KEY,
    profile    TEXT NOT NULL,
    chosen_at  INTEGER NOT NULL
) STRICT;
