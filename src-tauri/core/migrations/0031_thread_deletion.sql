-- The owner deletes a chat. Its messages (thread_events) go; the thread row stays, marked
-- `deleted_at` with its title (the first message's words) blanked, because what must outlive the
-- chat points at it: its chat_runs rows reference threads(id), and those runs are the fence every
-- late write of a run checks (`NOT EXISTS … status <> 'running'`: a deleted run row would look
-- like one still running) and the claimants of the journal rows and proposals kept as receipts.
-- A marked thread is listed nowhere and takes no new run, so its id is never reused.
ALTER TABLE threads ADD COLUMN deleted_at INTEGER;
