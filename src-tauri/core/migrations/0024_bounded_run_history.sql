-- A task that runs again and again (a monitor looking every minute: 1,440 runs a day) kept every
-- run and every event its runs wrote, so its history grew without end. Past a task's newest 100
-- runs, a run that ended cleanly (finished, failed or cancelled) is dropped with the events it
-- wrote, as each later run ends. Kept whatever their age: interrupted runs (the owner reviews
-- them) and a run an operation still in doubt names as its claimant (`dispatching`: recovery,
-- Pause and a lost lease read who held the effect from the run; `outcome_unknown`: the owner's
-- review). The task's own events (run_id NULL) are kept.

-- The runs that may go, said once for the trigger and the sweep below.
CREATE VIEW task_runs_past_keeping AS
SELECT r.task_id, r.attempt, r.id
FROM task_runs r JOIN tasks t ON t.id = r.task_id
WHERE r.attempt <= t.attempts - 100
  AND r.status IN ('finished', 'failed', 'cancelled')
  AND r.id NOT IN (SELECT claimant FROM operations
                   WHERE scope = 'task:' || r.task_id AND claimant IS NOT NULL
                     AND status IN ('dispatching', 'outcome_unknown'));

CREATE TRIGGER tasks_run_history_bounded AFTER UPDATE OF status ON tasks
WHEN OLD.status = 'running' AND NEW.status <> 'running' AND NEW.attempts > 100
BEGIN
    DELETE FROM task_events
    WHERE task_id = NEW.id AND run_id IN (SELECT id FROM task_runs_past_keeping WHERE task_id = NEW.id);
    DELETE FROM task_runs
    WHERE task_id = NEW.id AND attempt IN (SELECT attempt FROM task_runs_past_keeping WHERE task_id = NEW.id);
END;

-- What the trigger would have dropped already, once, for every task (a task's current run is
-- `running` or is its newest, so it is never among them): a long history is not deleted in one
-- go by the statement that next ends a run (a Pause would wait for it), and a task that never
-- runs again is bounded too.
DELETE FROM task_events WHERE run_id IN (SELECT id FROM task_runs_past_keeping);
DELETE FROM task_runs WHERE (task_id, attempt) IN (SELECT task_id, attempt FROM task_runs_past_keeping);
