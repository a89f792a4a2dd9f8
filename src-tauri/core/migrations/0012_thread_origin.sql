-- threads.origin: who started the conversation ('window' or 'agui_endpoint'), written once when
-- the thread row is created and never changed. The endpoint may continue only its own threads;
-- deciding that from the earliest chat run's started_at depended on the clock (a run that waited
-- for the writer, or a clock stepped back, could become the "first" one).
ALTER TABLE threads ADD COLUMN origin TEXT;

-- Threads written before this column: the origin of their earliest run, as it was decided then.
-- A thread with no run stays NULL, which the endpoint is refused (as before).
UPDATE threads SET origin = (
    SELECT origin FROM chat_runs WHERE chat_runs.thread_id = threads.id ORDER BY started_at, rowid LIMIT 1
);
