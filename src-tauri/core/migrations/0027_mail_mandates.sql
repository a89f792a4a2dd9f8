-- A standing order may send mail (issue 31, build point 3: "may send at most 3 emails a day to
-- these recipients"): grant kind 'send_mail' with its recipients (a JSON array of normalized
-- addresses); and send forms within one site: grant kind 'send_forms' with its origin (a
-- 'site_actions' grant only opens that site's pages). A proposal a standing order approved in the owner's place names it
-- (`proposals.mandate_id`), and its receipt cites it.
--
-- SQLite cannot change a CHECK constraint in place, so `mandates` is rebuilt. `mandate_uses`
-- refers to it by foreign key, so both are rebuilt, the child dropped first; renaming the new
-- parent rewrites the new child's reference to the final name.
CREATE TABLE mandates_new (
    id           TEXT PRIMARY KEY,
    holder_kind  TEXT NOT NULL CHECK (holder_kind IN ('task', 'schedule')),
    holder_id    TEXT NOT NULL,
    grant_kind   TEXT NOT NULL CHECK (grant_kind IN
        ('computer_commands', 'site_actions', 'remember_facts', 'send_mail', 'send_forms')),
    origin       TEXT,
    recipients   TEXT CHECK (recipients IS NULL OR json_valid(recipients)),
    max_uses     INTEGER NOT NULL CHECK (max_uses > 0),
    window_ms    INTEGER NOT NULL CHECK (window_ms >= 0),
    uses         INTEGER NOT NULL DEFAULT 0,
    window_start INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    CHECK ((grant_kind = 'send_mail') = (recipients IS NOT NULL))
);
INSERT INTO mandates_new (id, holder_kind, holder_id, grant_kind, origin, max_uses, window_ms, uses, window_start,
                          expires_at, created_at, revoked_at)
    SELECT id, holder_kind, holder_id, grant_kind, origin, max_uses, window_ms, uses, window_start,
           expires_at, created_at, revoked_at FROM mandates;

CREATE TABLE mandate_uses_new (
    mandate_id TEXT NOT NULL REFERENCES mandates_new(id),
    op_scope   TEXT NOT NULL,
    op_id      TEXT NOT NULL,
    tool       TEXT NOT NULL,
    used_at    INTEGER NOT NULL,
    PRIMARY KEY (op_scope, op_id)
);
INSERT INTO mandate_uses_new SELECT mandate_id, op_scope, op_id, tool, used_at FROM mandate_uses;

DROP TABLE mandate_uses;
DROP TABLE mandates;
ALTER TABLE mandates_new RENAME TO mandates;
ALTER TABLE mandate_uses_new RENAME TO mandate_uses;
CREATE INDEX mandates_holder ON mandates (holder_kind, holder_id);
CREATE INDEX mandate_uses_mandate ON mandate_uses (mandate_id);

ALTER TABLE proposals ADD COLUMN mandate_id TEXT;

-- A send a standing order approved whose outcome is unknown (a lost answer, a crash while it was
-- carried out) puts its task in doubt in the same statement: flagged for "Retry after review",
-- and not left to run on (a task that is not running becomes interrupted; a running one ends in
-- doubt at its next step). Without it a retried or recurring run could send it again unseen.
CREATE TRIGGER proposals_mandated_doubt AFTER UPDATE OF status ON proposals
WHEN NEW.status = 'outcome_unknown' AND NEW.mandate_id IS NOT NULL AND NEW.task_id IS NOT NULL
BEGIN
    UPDATE tasks SET outcome_uncertain = 1 WHERE id = NEW.task_id;
    UPDATE tasks SET status = 'interrupted', question = NULL, lease_expires_at = NULL,
                     updated_at = coalesce(NEW.decided_at, updated_at),
                     error = 'An action of this run may or may not have happened. Check what it did, then choose "Retry after review".',
                     status_note = 'Interrupted: An action of this run may or may not have happened. Check what it did, then choose "Retry after review".'
     WHERE id = NEW.task_id AND status IN ('waiting_input', 'queued', 'scheduled', 'waiting_approval');
END;
