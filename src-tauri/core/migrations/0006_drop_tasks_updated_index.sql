-- Every checkpoint and status change rewrote this index; the one query that used it (the
-- Activity list, at most a few thousand rows) sorts just as well without it.
DROP INDEX tasks_updated;
