-- A schedule the agent asked for after reading content from outside the owner, approved on its
-- card, records that content (a JSON array of {kind, detail}), and every task it starts carries
-- it (`outsideSources`), so each run starts from what the schedule was made from, not from the
-- owner's own words (issue 31).
ALTER TABLE schedules ADD COLUMN sources TEXT NOT NULL DEFAULT '[]';

-- Schedules made before this column by an approved held call (its proposal is keyed
-- 'held:' || the schedule's own key) take the sources recorded on that card.
UPDATE schedules SET sources = (SELECT p.sources FROM proposals p WHERE p.key = 'held:' || schedules.idempotency_key)
 WHERE EXISTS (SELECT 1 FROM proposals p WHERE p.key = 'held:' || schedules.idempotency_key AND p.sources <> '[]');
