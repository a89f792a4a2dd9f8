-- tasks_open and tasks_next_due serve every query tasks_due served; one index less to keep
-- current on every status change.
DROP INDEX tasks_due;
