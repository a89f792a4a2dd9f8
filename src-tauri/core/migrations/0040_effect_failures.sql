-- Failed effects carry a failure id too. A failed run's id is derived from its run (0037); an
-- effect fails in many places — the journal settling a tool's effect, a lease sweep or a restart
-- stranding one, an approved action that failed or whose outcome is unknown — and some of them
-- are SQL statements with no Rust between the change and its commit. So the id is made here, by
-- triggers, in the same statement that records the failure: whatever path fails an effect, its
-- id exists as soon as the failure does, and no path can forget it.
--
-- The id is 40 random bits (`bits`), which the core writes as the 8 Crockford characters of a
-- `FailureId`. An effect keeps its first id when it fails again (a retry of a failed operation),
-- with the newest message. A collision with another effect's id (odds about one in a trillion)
-- records no id rather than failing the statement that settles the effect: every insert here is
-- OR IGNORE, and every value is computed so that no constraint can refuse it.
--
-- `later` follows what became of it afterwards, so Activity never shows as open a doubt the
-- owner resolved or a retry settled: `succeeded` (a retry or a recheck found it done),
-- `acknowledged` (the owner reviewed the doubt), `withdrawn` (its row was withdrawn: it never
-- started). A new failure of the same effect clears it.
--
-- `message` is what the owner saw (an operation's receipt error, a proposal's error); it holds
-- no more than those already do, and the report the owner copies gives only its length. Bounded:
-- the newest 500 are kept. A deleted chat takes its own with it (the store's `delete_thread`),
-- and an effect of a deleted chat that settles late records none.

CREATE TABLE effect_failures (
    bits         INTEGER PRIMARY KEY CHECK (bits BETWEEN 0 AND 1099511627775),
    subject      TEXT NOT NULL CHECK (subject IN ('operation', 'proposal')),
    scope        TEXT,
    op_id        TEXT,
    claimant     TEXT,
    proposal_id  TEXT UNIQUE,
    proposal_key TEXT,
    task_id      TEXT,
    tool         TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('failed', 'outcome_unknown')),
    later        TEXT CHECK (later IN ('succeeded', 'acknowledged', 'withdrawn')),
    message      TEXT NOT NULL,
    at           INTEGER NOT NULL,
    UNIQUE (scope, op_id),
    CHECK ((subject = 'operation') = (scope IS NOT NULL AND op_id IS NOT NULL AND proposal_id IS NULL))
) STRICT;
CREATE INDEX effect_failures_at ON effect_failures(at);

CREATE TRIGGER operations_record_failure AFTER UPDATE OF status ON operations
WHEN NEW.status IN ('failed', 'outcome_unknown') AND OLD.status IS NOT NEW.status
    AND NOT EXISTS (SELECT 1 FROM threads t
                    WHERE substr(NEW.scope, 1, 7) = 'thread:' AND t.id = substr(NEW.scope, 8) AND t.deleted_at IS NOT NULL)
BEGIN
    INSERT OR IGNORE INTO effect_failures (bits, subject, scope, op_id, claimant, task_id, tool, status, message, at)
    VALUES (random() & 1099511627775, 'operation', NEW.scope, NEW.op_id, NEW.claimant,
            CASE WHEN substr(NEW.scope, 1, 5) = 'task:' THEN substr(NEW.scope, 6) END,
            NEW.tool, NEW.status, '',
            coalesce(NEW.settled_at, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)));
    UPDATE effect_failures SET
        status = NEW.status,
        later = NULL,
        claimant = NEW.claimant,
        message = coalesce(
            CASE WHEN json_valid(NEW.receipt) THEN json_extract(NEW.receipt, '$.error') END,
            CASE NEW.status
                WHEN 'failed' THEN 'It failed, so nothing happened.'
                ELSE 'Hearth lost track of it, so it may or may not have happened. Review it in Activity before retrying.' END),
        at = coalesce(NEW.settled_at, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
    WHERE scope = NEW.scope AND op_id = NEW.op_id;
END;

CREATE TRIGGER operations_failure_resolved AFTER UPDATE OF status ON operations
WHEN NEW.status IN ('succeeded', 'acknowledged') AND OLD.status IS NOT NEW.status
BEGIN
    UPDATE effect_failures SET later = NEW.status WHERE scope = NEW.scope AND op_id = NEW.op_id;
END;

CREATE TRIGGER operations_failure_withdrawn AFTER DELETE ON operations
BEGIN
    UPDATE effect_failures SET later = 'withdrawn' WHERE scope = OLD.scope AND op_id = OLD.op_id;
END;

CREATE TRIGGER proposals_record_failure AFTER UPDATE OF status ON proposals
WHEN NEW.status IN ('failed', 'outcome_unknown') AND OLD.status IS NOT NEW.status
    AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.deleted_at IS NOT NULL
                    AND (substr(NEW.key, 1, length(t.id) + 8) = 'thread:' || t.id || ':'
                         OR substr(NEW.key, 1, length(t.id) + 13) = 'held:thread:' || t.id || ':'))
BEGIN
    INSERT OR IGNORE INTO effect_failures (bits, subject, proposal_id, proposal_key, task_id, tool, status, message, at)
    VALUES (random() & 1099511627775, 'proposal', NEW.id, NEW.key, NEW.task_id, NEW.kind, NEW.status, '',
            CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
    UPDATE effect_failures SET
        status = NEW.status,
        later = NULL,
        message = coalesce(NEW.error, CASE NEW.status
            WHEN 'failed' THEN 'The approved action failed, so nothing was sent or changed.'
            ELSE 'Hearth lost track of the approved action; it may or may not have happened.' END),
        at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
    WHERE proposal_id = NEW.id;
END;

CREATE TRIGGER proposals_failure_resolved AFTER UPDATE OF status ON proposals
WHEN NEW.status = 'succeeded' AND OLD.status IS NOT NEW.status
BEGIN
    UPDATE effect_failures SET later = 'succeeded' WHERE proposal_id = NEW.id;
END;

-- A proposal's error may be written after its status (a note on an uncertain one): the failure
-- keeps the newest words the card shows.
CREATE TRIGGER proposals_failure_message AFTER UPDATE OF error ON proposals
WHEN NEW.status IN ('failed', 'outcome_unknown') AND NEW.error IS NOT NULL
BEGIN
    UPDATE effect_failures SET message = NEW.error WHERE proposal_id = NEW.id;
END;

CREATE TRIGGER effect_failures_bounded AFTER INSERT ON effect_failures
BEGIN
    DELETE FROM effect_failures
    WHERE bits IN (SELECT bits FROM effect_failures ORDER BY at DESC, bits DESC LIMIT -1 OFFSET 500);
END;
