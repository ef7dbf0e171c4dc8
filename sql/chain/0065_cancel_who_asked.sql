-- Migration 0065_cancel_who_asked.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- Who asked for a cancel is recorded from the session (tickq.asked_by), not taken from the
-- caller: request_cancel's third parameter is now the client's claim (OS user and host), so it
-- is renamed, which CREATE OR REPLACE cannot do. The API file creates it again.
DROP FUNCTION IF EXISTS tickq.request_cancel(text, text, text, timestamptz);

COMMENT ON COLUMN tickq.job_run.cancel_by IS
'Who asked for the cancel, as tickq.asked_by wrote it: the session''s role (and how the server '
'authenticated it, when that names someone else), then what the client claims (the OS user and '
'host of `tickq cancel`), labelled as a claim.';
COMMENT ON COLUMN tickq.job_run.cancel_role IS
'The database role (session_user) that asked for the cancel.';
