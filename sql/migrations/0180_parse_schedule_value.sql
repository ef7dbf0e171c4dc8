-- tickq.parse_schedule returns the schedule as one value (tickq.schedule) instead of a job_kind
-- row holding only its schedule columns; tickq.with_schedule puts it in a kind's or an agent's
-- row. This migration dropped the old signature, since CREATE OR REPLACE cannot change a return
-- type. The API files now drop every function nothing depends on before they create theirs
-- (sql/api/00_api_begin.sql), so it has nothing left to do; it stays so that a database that
-- recorded it is known.
SELECT;
