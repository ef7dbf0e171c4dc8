-- tickq.agents_at and tickq.agent_detail read the clock only to hand it to describe_schedule,
-- which never read it and now takes the schedule alone (one tickq.schedule): their p_now went.
-- This migration dropped the old signatures, which beside the new ones would make a call
-- without the time ambiguous. The API files now drop every function nothing depends on before
-- they create theirs (sql/api/00_api_begin.sql), so it has nothing left to do; it stays so that
-- a database that recorded it is known.
SELECT;
