-- Goals (issue 14): a title, a category and up to 20 milestones. A task works on a goal (and a
-- milestone) when its input names them (`goalId`, `milestone`, 1-based); its success marks the
-- milestone done in the same statement, by trigger, so no path can finish the task and forget
-- the milestone.
CREATE TABLE goals (
    id          TEXT PRIMARY KEY,
    key         TEXT NOT NULL UNIQUE,
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    category    TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('active', 'paused')),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE goal_milestones (
    goal_id  TEXT NOT NULL,
    position INTEGER NOT NULL,
    title    TEXT NOT NULL,
    done_at  INTEGER,
    task_id  TEXT,
    PRIMARY KEY (goal_id, position)
) STRICT, WITHOUT ROWID;

-- A schedule's runs work on its goal; pausing the goal pauses the schedule.
ALTER TABLE schedules ADD COLUMN goal_id TEXT;

CREATE TRIGGER tasks_milestone_done AFTER UPDATE OF status ON tasks
WHEN NEW.status = 'succeeded' AND OLD.status IS NOT 'succeeded'
     AND json_valid(NEW.input) AND json_type(NEW.input, '$.goalId') = 'text'
     AND json_type(NEW.input, '$.milestone') = 'integer'
BEGIN
    UPDATE goal_milestones SET done_at = NEW.updated_at, task_id = NEW.id
    WHERE goal_id = json_extract(NEW.input, '$.goalId')
      AND position = json_extract(NEW.input, '$.milestone')
      AND done_at IS NULL;
END;
