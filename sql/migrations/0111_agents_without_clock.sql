-- tickq.agents_at and tickq.agent_detail read the clock only to hand it to describe_schedule,
-- which never read it and now takes the schedule alone (one tickq.schedule): their p_now goes.
-- CREATE OR REPLACE cannot drop a parameter, and the old signature beside the new one would make
-- a call without it ambiguous; the API files (24_agent_reads.sql) create each again without it.
DROP FUNCTION IF EXISTS tickq.agent_detail(text, timestamptz);
DROP FUNCTION IF EXISTS tickq.agents_at(timestamptz);
