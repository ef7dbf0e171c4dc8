-- tickq.parse_schedule returns the schedule as one value (tickq.schedule) instead of a job_kind
-- row holding only its schedule columns; tickq.with_schedule puts it in a kind's or an agent's
-- row. CREATE OR REPLACE cannot change a return type: the API file (21_kind_schedule.sql)
-- creates it again.
DROP FUNCTION IF EXISTS tickq.parse_schedule(text, jsonb, text);
