-- After a review of 0019 and 0020 (kept as they were first committed, so a database that applied
-- them still opens): bounds on what grows, and forgetting that sticks.

-- The inbox keeps the newest 1,000 notices (their keys go with them: an event that old is not
-- written again).
CREATE TRIGGER notifications_pruned AFTER INSERT ON notifications BEGIN
    DELETE FROM notifications WHERE id <= NEW.id - 1000;
END;

-- The keys of forgotten facts: a retried remember_fact of the same step must not bring back a
-- fact the owner forgot.
CREATE TABLE memory_forgotten (
    key TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;

DROP TRIGGER memories_unindexed;
CREATE TRIGGER memories_unindexed AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
    DELETE FROM memory_uses WHERE memory_id = OLD.id;
    INSERT OR IGNORE INTO memory_forgotten (key) VALUES (OLD.key);
END;

-- The record of uses covers the last 30 days.
CREATE TRIGGER memory_uses_pruned AFTER INSERT ON memory_uses BEGIN
    DELETE FROM memory_uses WHERE used_at < NEW.used_at - 30 * 86400000;
END;

-- What a goal's Pause paused, so its Resume brings back only that (not what the owner paused
-- by hand, nor a monitor that paused itself).
CREATE TABLE goal_paused (
    goal_id TEXT NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('task', 'schedule')),
    item_id TEXT NOT NULL,
    PRIMARY KEY (goal_id, kind, item_id)
) STRICT, WITHOUT ROWID;
