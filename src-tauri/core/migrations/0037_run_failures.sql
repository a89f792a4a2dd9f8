-- Failures the owner can follow. A failed run gets a short id (8 characters of Crockford base32,
-- derived from the run's id in the core, so the same run always has the same one) shown with its
-- message; the id opens the run's timeline in Activity. `run_failures` maps the id to the run
-- and keeps the message the owner saw; `provider_tries` keeps each try of a request to the model
-- provider (its HTTP status or the kind of transport failure, the retry number, when), so a
-- timeline can say "500, 500, 500" rather than only the last error. Never a header, the request
-- or the key: nothing here could carry a secret.
--
-- Bounded like the rest of run history: the newest 500 failures are kept; tries of runs that did
-- not fail are kept for the newest 10,000 tries (each chat turn writes one per request), tries of
-- a failure as long as the failure; a task run dropped by the history bound (0024) takes its
-- failure and its tries with it.

CREATE TABLE run_failures (
    id        TEXT PRIMARY KEY,
    run_id    TEXT NOT NULL UNIQUE,
    kind      TEXT NOT NULL CHECK (kind IN ('chat', 'task')),
    thread_id TEXT,
    task_id   TEXT,
    message   TEXT NOT NULL,
    at        INTEGER NOT NULL
) STRICT;
CREATE INDEX run_failures_at ON run_failures(at);

CREATE TABLE provider_tries (
    id         INTEGER PRIMARY KEY,
    run_id     TEXT NOT NULL,
    provider   TEXT NOT NULL,
    try_number INTEGER NOT NULL CHECK (try_number >= 1),
    retry      INTEGER NOT NULL CHECK (retry >= 0),
    status     INTEGER,
    transport  TEXT CHECK (transport IN ('connect', 'timeout', 'other')),
    at         INTEGER NOT NULL,
    CHECK ((status IS NULL) <> (transport IS NULL))
) STRICT;
CREATE INDEX provider_tries_run ON provider_tries(run_id, id);

CREATE TRIGGER provider_tries_bounded AFTER INSERT ON provider_tries
WHEN NEW.id > 10000
BEGIN
    DELETE FROM provider_tries
    WHERE id <= NEW.id - 10000 AND run_id NOT IN (SELECT run_id FROM run_failures);
END;

CREATE TRIGGER run_failures_bounded AFTER INSERT ON run_failures
BEGIN
    DELETE FROM provider_tries
    WHERE run_id IN (SELECT run_id FROM run_failures ORDER BY at DESC, rowid DESC LIMIT -1 OFFSET 500);
    DELETE FROM run_failures
    WHERE run_id IN (SELECT run_id FROM run_failures ORDER BY at DESC, rowid DESC LIMIT -1 OFFSET 500);
END;

CREATE TRIGGER task_runs_forget_failures AFTER DELETE ON task_runs
BEGIN
    DELETE FROM provider_tries WHERE run_id = OLD.id;
    DELETE FROM run_failures WHERE run_id = OLD.id;
END;
