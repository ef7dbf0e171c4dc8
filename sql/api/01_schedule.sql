-- Schedule arithmetic: the one implementation of "when is this kind next due".
--
-- SQLSTATEs raised by the tickq API (class TQ):
--   TQ001 run_not_live     a report for a run that is not running, or not leased by the reporter
--   TQ002 invalid_registry a registry value the database refuses (names kind and key)
--   TQ003 unknown_kind     no such kind, or it left the registry
--   TQ004 lease_too_short  settings.lease would be shorter than a kind's timeout
--   TQ005 no_free_slot     every slot is leased
--   TQ006 kind_busy        the kind is already leased (a kind never runs twice at once)
--   TQ007 run_unknown      a report for a run the database never had (a claim a failover lost)
--   TQ030 not_armed        a manual run of an unarmed irreversible kind names no person
--   TQ031 unknown_step     a step report names no step of the run's chain
--   TQ032 step_reported    a step report for a step already reported
--   TQ060 invalid_pause    a pause that would end by now, or a reason over 500 characters
--   TQ100 unknown_target   a cancel names no run or kind of the queue (28_cancel)
--   TQ101 not_running      a cancel of a run that is not running, or a kind with no live run
--   TQ102 invalid_cancel   a cancel's reason over 500 characters
--   TQ090 other_registry   a sync from another registry would retire kinds of the queue (25_queue_registry)
--   TQ091 not_retired      forget_kind of a kind that is not retired, or still leased
--   TQ080 no_window        a simulation window that is not positive (tickq.simulate)
--   TQ070 bad_access       a role's tickq.access setting is neither dispatcher nor reader (99_privileges)
--   TQ071 grant_unknown    tickq.access_privileges names a function that does not exist
--   TQ072 same_role        sql/roles.sql given one role for two of owner, dispatcher, reader
--   TQ073 schema_owner     sql/roles.sql found schema tickq owned by another role than the owner

CREATE OR REPLACE FUNCTION tickq.unknown_kind_error(
    p_kind text,
    p_live boolean,
    p_hint text DEFAULT 'tickq status lists the kinds.'
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- p_live: the caller wants a kind of the registry (a retired kind is none); otherwise any
    -- kind the queue still holds.
    RAISE EXCEPTION 'no kind "%" in the %', p_kind, CASE WHEN p_live THEN 'registry' ELSE 'queue' END
        USING ERRCODE = 'TQ003', HINT = p_hint;
END
$$;
COMMENT ON FUNCTION tickq.unknown_kind_error(text, boolean, text) IS
'Raises TQ003 (unknown_kind) naming the kind: no kind "NAME" in the registry (p_live: it must be a '
'live kind) or in the queue, with p_hint saying where the kinds are listed.';

-- A schedule travels as one value, tickq.schedule (migration 0110): the eight schedule columns
-- of a kind (job_kind.every, every_offset, at_times, on_days, days, months, cron, timezone), made
-- from a kind's or an agent's row by tickq.schedule_of. A new schedule field is one more field of
-- the type and of tickq.schedule_of, not one more parameter of every function here.

CREATE OR REPLACE FUNCTION tickq.schedule_of(
    p_kind tickq.job_kind
) RETURNS tickq.schedule
LANGUAGE sql IMMUTABLE
AS $$
    -- One expression, so that a caller inlines it: the planner then reads the columns themselves.
    SELECT ROW(p_kind.every, p_kind.every_offset, p_kind.at_times, p_kind.on_days, p_kind.days, p_kind.months,
        p_kind.cron, p_kind.timezone)::tickq.schedule
$$;
COMMENT ON FUNCTION tickq.schedule_of(tickq.job_kind) IS
'A kind''s schedule columns as one tickq.schedule, what next_slot, slots_between, last_slot and '
'describe_schedule take.';

CREATE OR REPLACE FUNCTION tickq.schedule_of(
    p_agent tickq.agent
) RETURNS tickq.schedule
LANGUAGE sql IMMUTABLE
AS $$
    SELECT ROW(p_agent.every, NULL::interval, p_agent.at_times, p_agent.on_days, p_agent.days, p_agent.months,
        p_agent.cron, p_agent.timezone)::tickq.schedule
$$;
COMMENT ON FUNCTION tickq.schedule_of(tickq.agent) IS
'An agent''s schedule columns as one tickq.schedule (an agent''s every cadence has no offset).';

CREATE OR REPLACE FUNCTION tickq.with_schedule(
    p_row anyelement,
    p_schedule tickq.schedule
) RETURNS anyelement
LANGUAGE sql STABLE
AS $$
    -- The inverse of tickq.schedule_of: each field of the schedule lands in the row's column of
    -- the same name (a NULL field clears it); a field the row has no column for (an agent's
    -- every_offset) is left out, and every other column keeps its value.
    SELECT jsonb_populate_record(p_row, to_jsonb(p_schedule))
$$;
COMMENT ON FUNCTION tickq.with_schedule(anyelement, tickq.schedule) IS
'p_row (a job_kind or an agent) with its schedule columns set from p_schedule, the other columns '
'as they were; the inverse of tickq.schedule_of.';

CREATE OR REPLACE FUNCTION tickq.next_slot(
    p_schedule tickq.schedule,
    p_after timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_seconds numeric;
    v_offset numeric;
    v_calendar tickq.calendar;
BEGIN
    IF p_schedule.every IS NOT NULL THEN
        -- Aligned to the clock (Unix epoch, UTC): every 15 minutes lands on :00, :15, :30, :45;
        -- with an offset of 5 minutes on :05, :20, :35, :50.
        v_seconds := extract(EPOCH FROM p_schedule.every);
        v_offset := coalesce(extract(EPOCH FROM p_schedule.every_offset), 0);
        RETURN to_timestamp((floor((extract(EPOCH FROM p_after) - v_offset) / v_seconds) + 1) * v_seconds
            + v_offset);
    END IF;
    -- Calendar: local dates in the kind's zone (01_calendar.sql). A local time that does not
    -- exist on a spring-forward day maps to the instant one offset later (02:30 becomes 03:30);
    -- an ambiguous one on a fall-back day to its second occurrence. Either way each (date, time)
    -- pair is exactly one slot, so a daily 02:30 runs once on both change days.
    -- (The calendar in a variable first: calendar_next, one expression, is then inlined here;
    -- given calendar_of's call, which it reads twice, it would be called as a function.)
    v_calendar := tickq.calendar_of(p_schedule);
    RETURN tickq.calendar_next(v_calendar, p_after);
END
$$;
COMMENT ON FUNCTION tickq.next_slot(tickq.schedule, timestamptz) IS
'The first slot of p_schedule strictly after p_after: for an every cadence aligned to the clock '
'and shifted by its offset (NULL for none); for a calendar schedule (times of day, optional '
'weekdays: ISO 1=Mon..7=Sun, nth 10*n+day, last 90+day; days of the month, negative from its '
'end; months) or a cron string, in its IANA zone, correct across daylight-saving changes.';

CREATE OR REPLACE FUNCTION tickq.next_slots(
    p_schedule tickq.schedule,
    p_count integer,
    p_now timestamptz DEFAULT now()
) RETURNS SETOF timestamptz
LANGUAGE sql STABLE
AS $$
    -- Each from the one before with next_slot; a calendar that names no more dates ends early.
    WITH RECURSIVE walk (n, slot) AS (
        SELECT 1, tickq.next_slot(p_schedule, p_now) WHERE p_count >= 1
        UNION ALL
        SELECT w.n + 1, tickq.next_slot(p_schedule, w.slot)
        FROM walk AS w
        WHERE w.n < p_count AND w.slot IS NOT NULL
    )
    SELECT w.slot FROM walk AS w WHERE w.slot IS NOT NULL ORDER BY w.n
$$;
COMMENT ON FUNCTION tickq.next_slots(tickq.schedule, integer, timestamptz) IS
'The next p_count slots of p_schedule after p_now, in order (fewer when the calendar names no more '
'dates; none for a count below 1): tickq next, tickq schedule and tickq agent show.';

CREATE OR REPLACE FUNCTION tickq.slots_between(
    p_schedule tickq.schedule,
    p_since timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE sql STABLE
AS $$
    -- One expression, so that a claim inlines it: an every cadence costs no function call. The
    -- count of an every cadence is capped below what an integer holds (claims add the slot due):
    -- a one-second kind asleep for 70 years would overflow it.
    SELECT CASE
        WHEN p_since >= p_now THEN 0
        WHEN p_schedule.every IS NOT NULL THEN least(
            floor((extract(EPOCH FROM p_now) - coalesce(extract(EPOCH FROM p_schedule.every_offset), 0))
                / extract(EPOCH FROM p_schedule.every))
            - floor((extract(EPOCH FROM p_since) - coalesce(extract(EPOCH FROM p_schedule.every_offset), 0))
                / extract(EPOCH FROM p_schedule.every)), 2147483646)::integer
        ELSE tickq.calendar_count(tickq.calendar_of(p_schedule), p_since, p_now)
    END
$$;
COMMENT ON FUNCTION tickq.slots_between(tickq.schedule, timestamptz, timestamptz) IS
'How many slots of p_schedule fall in (p_since, p_now]: the slots a late run merges (a calendar''s '
'at most 100,000).';

CREATE OR REPLACE FUNCTION tickq.last_slot(
    p_schedule tickq.schedule,
    p_since timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- One expression, so that a claim inlines it: an every cadence costs no function call (given
    -- tickq.schedule_of(k), the planner reads k's columns, not a composite value).
    SELECT CASE
        WHEN p_since >= p_now THEN p_since
        -- next_slot's clock alignment (Unix epoch, shifted by the offset), in whole microseconds
        WHEN p_schedule.every IS NOT NULL THEN greatest(p_since, date_bin(p_schedule.every, p_now,
            '1970-01-01 00:00:00+00'::timestamptz + coalesce(p_schedule.every_offset, '0 seconds'::interval)))
        ELSE coalesce(tickq.calendar_last(tickq.calendar_of(p_schedule), p_since, p_now), p_since)
    END
$$;
COMMENT ON FUNCTION tickq.last_slot(tickq.schedule, timestamptz, timestamptz) IS
'The latest slot of p_schedule in (p_since, p_now], or p_since when none falls there: the slot '
'a run merging the slots since p_since stands for (job_run.slot_at, TICKQ_SLOT).';

CREATE OR REPLACE FUNCTION tickq.format_duration(
    p_duration interval
) RETURNS text
LANGUAGE sql STABLE
AS $$
    -- The registry's own spelling: 300 s is "5m", 5400 s "1h30m", 86400 s "1d". One expression,
    -- so the planner inlines it where it is used: that needs STABLE, as concat() is (declared
    -- IMMUTABLE it was called once per row, a third of queue_status over 10,000 kinds). The
    -- seconds are a double, not extract()'s numeric: integer steps on it cost far less.
    SELECT CASE WHEN date_part('epoch', p_duration) < 1 THEN date_part('epoch', p_duration)::text || 's'
        ELSE concat(
            nullif(floor(date_part('epoch', p_duration))::bigint / 86400, 0) || 'd',
            nullif(floor(date_part('epoch', p_duration))::bigint % 86400 / 3600, 0) || 'h',
            nullif(floor(date_part('epoch', p_duration))::bigint % 3600 / 60, 0) || 'm',
            nullif(floor(date_part('epoch', p_duration))::bigint % 60, 0) || 's'
        )
    END
$$;
COMMENT ON FUNCTION tickq.format_duration(interval) IS
'A duration as the registry writes it: "5m", "1h30m", "1d". Whole seconds;';

CREATE OR REPLACE FUNCTION tickq.weekday_name(
    p_day smallint
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    -- ISO 1..7 as mon..sun, 10 * n + day as "1st mon".."5th sun", 90 + day as "last fri".
    SELECT CASE WHEN p_day BETWEEN 91 AND 97 THEN 'last '
            WHEN p_day > 10 THEN (ARRAY['1st', '2nd', '3rd', '4th', '5th'])[p_day / 10] || ' '
            ELSE '' END
        || (ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[p_day % 10]
$$;
COMMENT ON FUNCTION tickq.weekday_name(smallint) IS
'A weekday of on_days as the registry writes it: "mon", "1st mon", "last fri".';

CREATE OR REPLACE FUNCTION tickq.number_ranges(
    p_values smallint[],
    p_names text[]
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    -- Runs of three or more as a range ("9-17"), values named when p_names is given (from 1).
    SELECT string_agg(CASE WHEN r.high - r.low >= 2
            THEN coalesce(p_names[r.low], r.low::text) || '-' || coalesce(p_names[r.high], r.high::text)
            ELSE (SELECT string_agg(coalesce(p_names[v], v::text), ',') FROM generate_series(r.low::integer, r.high::integer) AS v)
        END, ',' ORDER BY r.low)
    FROM (
        SELECT min(g.value) AS low, max(g.value) AS high
        FROM (SELECT u.value, u.value - row_number() OVER (ORDER BY u.value) AS run
            FROM unnest(p_values) AS u (value)) AS g
        GROUP BY g.run
    ) AS r
$$;
COMMENT ON FUNCTION tickq.number_ranges(smallint[], text[]) IS
'Sorted numbers as a short list: "1,15" or "9-17", named by p_names when given.';

CREATE OR REPLACE FUNCTION tickq.describe_days(
    p_calendar tickq.calendar
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT concat(
        CASE WHEN p_calendar.weekdays IS NOT NULL THEN ' on ' || concat_ws(',',
            tickq.number_ranges(ARRAY(SELECT d.day FROM unnest(p_calendar.weekdays) AS d (day) WHERE d.day <= 7),
                ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']),
            (SELECT string_agg(tickq.weekday_name(d.day), ',' ORDER BY d.day)
                FROM unnest(p_calendar.weekdays) AS d (day) WHERE d.day > 7)) END,
        CASE WHEN p_calendar.days IS NOT NULL THEN
            CASE WHEN p_calendar.either THEN ' or' ELSE '' END || ' on days ' || (
            SELECT string_agg(CASE WHEN d.day = -1 THEN 'last' ELSE d.day::text END, ','
                ORDER BY d.day < 0, abs(d.day))
            FROM unnest(p_calendar.days) AS d (day)) END,
        ' in ' || tickq.number_ranges(p_calendar.months,
            ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']),
        ' ' || p_calendar.timezone)
$$;
COMMENT ON FUNCTION tickq.describe_days(tickq.calendar) IS
'The day filters of a calendar and its zone in words: " on mon,last fri on days 1,15,last in '
'jan,jul Europe/London".';

CREATE OR REPLACE FUNCTION tickq.describe_calendar(
    p_calendar tickq.calendar
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN p_calendar.times IS NOT NULL THEN 'at ' || (
            SELECT string_agg(to_char(t.at_time, 'HH24:MI'), ',' ORDER BY t.at_time)
            FROM unnest(p_calendar.times) AS t (at_time))
        -- real time: "every 15 minutes", "at minute 0,30", then the hours unless all 24. One
        -- minute an hour is "every 60 minutes" only in every hour: "0 */3 * * *" runs three
        -- hours apart, "at minute 0 in hours 0,3,...".
        ELSE CASE WHEN cardinality(p_calendar.minutes) = 60 THEN 'every minute'
                WHEN p_calendar.minutes[1] = 0 AND 60 % cardinality(p_calendar.minutes) = 0
                    AND (cardinality(p_calendar.minutes) > 1 OR cardinality(p_calendar.hours) = 24)
                    AND p_calendar.minutes = ARRAY(SELECT generate_series(0, 59, 60 / cardinality(p_calendar.minutes)))::smallint[]
                    THEN 'every ' || 60 / cardinality(p_calendar.minutes) || ' minutes'
                ELSE 'at minute ' || tickq.number_ranges(p_calendar.minutes, NULL) END
            || CASE WHEN cardinality(p_calendar.hours) = 24 THEN ''
                ELSE ' in hours ' || tickq.number_ranges(p_calendar.hours, NULL) END
        END || tickq.describe_days(p_calendar)
$$;
COMMENT ON FUNCTION tickq.describe_calendar(tickq.calendar) IS
'A calendar as one line: "at 06:00,18:00 on mon Europe/London", "every 15 minutes in hours 9-17 '
'on mon-fri UTC".';

CREATE OR REPLACE FUNCTION tickq.describe_schedule(
    p_schedule tickq.schedule
) RETURNS text
LANGUAGE sql STABLE
AS $$
    -- One expression, so the planner inlines it into queue_status: an every cadence costs no call.
    SELECT CASE
        WHEN p_schedule.every IS NOT NULL THEN 'every ' || tickq.format_duration(p_schedule.every)
            || CASE WHEN p_schedule.every_offset IS NOT NULL
                THEN ' offset ' || tickq.format_duration(p_schedule.every_offset) ELSE '' END
        ELSE CASE WHEN p_schedule.cron IS NOT NULL THEN 'cron "' || p_schedule.cron || '": ' ELSE '' END
            || tickq.describe_calendar(tickq.calendar_of(p_schedule))
    END
$$;
COMMENT ON FUNCTION tickq.describe_schedule(tickq.schedule) IS
'A schedule as one line for people: "every 5m", "every 1h offset 20m", '
'"at 06:00,18:00 on mon Europe/London", "at 00:00 on days last UTC" or '
'"cron ""*/15 9-17 * * 1-5"": every 15 minutes in hours 9-17 on mon-fri UTC".';
