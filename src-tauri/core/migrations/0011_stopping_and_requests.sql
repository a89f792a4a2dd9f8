-- Review fixes to the one typed effect path (issue 9).
--
-- operations.stopping_owner: the process whose stopped effect has not reported yet (Stop made
-- the row outcome_unknown while the effect still ran). The owner's "Retry after review" waits
-- while that process lives, so a late result is never lost and the effect never runs twice.
ALTER TABLE operations ADD COLUMN stopping_owner TEXT;

-- proposals.request_hash: sha256 of what the tool asked for, before the workspace resolved it
-- (a calendar update or delete is resolved against the event as it is now). A retried step is
-- matched on this, so a step whose approval changed the event still finds its receipt.
ALTER TABLE proposals ADD COLUMN request_hash TEXT;

-- Rows written before claimants existed can never be settled by a claimant: whatever they were
-- doing may or may not have happened.
UPDATE operations SET status = 'outcome_unknown' WHERE status = 'dispatching' AND claimant IS NULL;
UPDATE tasks SET outcome_uncertain = 1
 WHERE 'task:' || id IN (SELECT scope FROM operations WHERE status = 'outcome_unknown');
