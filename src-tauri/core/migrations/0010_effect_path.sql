-- One typed effect path (issue 9).
--
-- operations.claimant: the run (task run id or chat run id) that holds a `dispatching` row, so a
-- settle compares the claimant, not only the status (a stale holder cannot settle a newer
-- claim's row across processes). operations.late_receipt: what an effect reported after Stop
-- had already made its row `outcome_unknown` — recorded, never discarded, and shown to the
-- owner who reviews it.
ALTER TABLE operations ADD COLUMN claimant TEXT;
ALTER TABLE operations ADD COLUMN late_receipt TEXT;
ALTER TABLE operations ADD COLUMN late_at INTEGER;

-- `interrupted` used to mean "stopped while running" and was replayed forever as if settled.
-- What was stopped mid-flight may or may not have happened: it is uncertain.
UPDATE operations SET status = 'outcome_unknown' WHERE status = 'interrupted';
UPDATE tasks SET outcome_uncertain = 1
 WHERE 'task:' || id IN (SELECT scope FROM operations WHERE status = 'outcome_unknown');

-- Who asked for a proposal (owner_chat, task, agui_endpoint, external_agent), and which
-- process is carrying an approved one out (so start-up leaves a live second process alone).
ALTER TABLE proposals ADD COLUMN origin TEXT NOT NULL DEFAULT 'owner_chat'
    CHECK (origin IN ('owner_chat', 'task', 'agui_endpoint', 'external_agent'));
ALTER TABLE proposals ADD COLUMN executor TEXT;
UPDATE proposals SET origin = 'task' WHERE task_id IS NOT NULL;

-- Which process runs a chat run, and who started it (the window or an AG-UI endpoint client).
ALTER TABLE chat_runs ADD COLUMN owner TEXT;
ALTER TABLE chat_runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'window' CHECK (origin IN ('window', 'agui_endpoint'));
