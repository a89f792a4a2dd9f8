-- A task that runs again and again (a monitor looking every minute: 1,440 runs a day) kept every
-- run and every event its runs wrote, so its history grew without end. Past a task's newest 100
-- runs, a run that ended cleanly (finished, failed or cancelled) is dropped with the events it
-- wrote, as each later run ends. Kept whatever their age: interrupted runs (the owner reviews
-- them) and any run an operation of the task still names as its claimant (the journal reads
-- who held an effect from it). The task's own events (run_id NULL) are kept.
CREATE TRIGGER tasks_run_history_bounded AFTER UPDATE OF status ON tasks
WHEN OLD.status = 'running' AND NEW.status <> 'running' AND NEW.attempts > 100
BEGIN
    DELETE FROM task_events
    WHERE task_id = NEW.id AND run_id IN (
        SELECT id FROM task_runs
        WHERE task_id = NEW.id AND attempt <= NEW.attempts - 100
          AND status IN ('finished', 'failed', 'cancelled')
          AND id NOT IN (SELECT claimant FROM operations WHERE scope = 'task:' || NEW.id AND claimant IS NOT NULL));
    DELETE FROM task_runs
    WHERE task_id = NEW.id AND attempt <= NEW.attempts - 100
      AND status IN ('finished', 'failed', 'cancelled')
      AND id NOT IN (SELECT claimant FROM operations WHERE scope = 'task:' || NEW.id AND claimant IS NOT NULL);
END;
