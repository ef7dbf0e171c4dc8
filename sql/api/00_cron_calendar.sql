-- A cron string's calendar (tickq.cron_parse, 01_calendar.sql), kept for the rest of a session of
-- the simulator, which asks for the same few again at every claim and report of their kinds,
-- and for the rest of a transaction that syncs a registry, which asks for each kind's three
-- times (its value rule, its schedule, its next slot).
-- Applied before 01_calendar.sql, whose tickq.calendar_of is read through it.

CREATE OR REPLACE FUNCTION tickq.cron_calendar(
    p_cron text,
    p_timezone text
) RETURNS tickq.calendar
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_session boolean := current_setting('tickq.simulator', true) IS NOT DISTINCT FROM 'on';
    v_key text;
    v_kept text;
    v_calendar tickq.calendar;
BEGIN
    -- A session of the simulator (tickq.simulation_session) reads the same few cron strings
    -- again at every claim and report of their kinds, and parsing one costs more than the rest
    -- of a report: it keeps each string's calendar, by a digest of string and zone, in a
    -- setting of the session (a pure function's answer: nothing else depends on it). A sync
    -- (tickq.sync_registry sets tickq.cron_kept for its transaction) keeps them the same way
    -- until its transaction ends.
    IF NOT v_session AND current_setting('tickq.cron_kept', true) IS DISTINCT FROM 'on' THEN
        RETURN tickq.cron_parse(p_cron, p_timezone);
    END IF;
    v_key := 'tickq.cron_' || md5(p_cron || E'\n' || p_timezone);
    v_kept := current_setting(v_key, true);
    IF v_kept <> '' THEN
        RETURN v_kept::tickq.calendar;
    END IF;
    v_calendar := tickq.cron_parse(p_cron, p_timezone);
    PERFORM set_config(v_key, v_calendar::text, NOT v_session);
    RETURN v_calendar;
END
$$;
COMMENT ON FUNCTION tickq.cron_calendar(text, text) IS
'A five-field cron string (or @hourly, @daily, @weekly, @monthly, @yearly, @annually) in zone '
'p_timezone as a tickq.calendar: single-number minute and hour as a wall-clock time, others on '
'real time, Vixie''s day-of-month OR day-of-week rule. Raises 22023 naming what is wrong (@reboot '
'and six-field forms included). In a simulator''s session each answer is kept for the session, in a '
'transaction where tickq.cron_kept is on (a sync''s) until it ends.';
