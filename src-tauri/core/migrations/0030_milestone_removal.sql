-- A milestone the owner removes is marked, not deleted: positions are never reused, so a task
-- that was working on a removed milestone (a failed one retried later) can never mark a new
-- milestone done in its place (the tasks_milestone_done trigger matches by position).
ALTER TABLE goal_milestones ADD COLUMN removed_at INTEGER;
