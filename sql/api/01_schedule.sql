-- Schedule arithmetic: the one implementation of "when is this kind next due".
--
-- SQLSTATEs raised by the tickq API (class TQ):
--   TQ001 run_not_live     a report for a run that is not running, or not leased by the reporter
--   TQ002 invalid_registry a registry value the database refuses (names kind and key)
--   TQ003 unknown_kind     no such kind, or it left the registry
--   TQ004 lease_too_short  settings.lease would be shorter than a kind's timeout
--   TQ005 no_free_slot     every slot is leased
--   TQ006 kind_busy        the kind is already leased (a kind never runs twice at once)
--   TQ030 not_armed        a manual run of an unarmed irreversible kind names no person
--   TQ031 unknown_step     a step report names no step of the run's chain
--   TQ032 step_reported    a step report for a step already reported
--   TQ060 invalid_pause    a pause that would end by now, or a reason over 500 characters
--   TQ090 other_registry   a sync from another registry would retire kinds of the queue (25_queue_registry)
--   TQ091 not_retired      forget_kind of a kind that is not retired, or still leased
--   TQ080 no_window        a simulation window that is not positive (tickq.simulate)
--   TQ070 bad_access       a role's tickq.access setting is neither dispatcher nor reader (99_privileges)
--   TQ071 grant_unknown    tickq.access_privileges names a function that does not exist
--   TQ072 same_role        sql/roles.sql given one role for two of owner, dispatcher, reader
--   TQ073 schema_owner     sql/roles.sql found schema tickq owned by another role than the owner

-- An every cadence may be shifted by an offset (job_kind.every_offset): the schedule functions
-- take it right after p_every.

CREATE OR REPLACE FUNCTION tickq.next_slot(
    p_every interval,
    p_offset interval,
    p_at_times time[],
    p_on_days smallint[],
    p_timezone text,
    p_after timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_seconds numeric;
    v_offset numeric;
    v_day date;
    v_slot timestamptz;
BEGIN
    IF p_every IS NOT NULL THEN
        -- Aligned to the clock (Unix epoch, UTC): every 15 minutes lands on :00, :15, :30, :45;
        -- with an offset of 5 minutes on :05, :20, :35, :50.
        v_seconds := extract(EPOCH FROM p_every);
        v_offset := coalesce(extract(EPOCH FROM p_offset), 0);
        RETURN to_timestamp((floor((extract(EPOCH FROM p_after) - v_offset) / v_seconds) + 1) * v_seconds
            + v_offset);
    END IF;
    -- Calendar: local dates in the kind's zone, from the day before (a gap at midnight can move
    -- a slot across a date) through a week ahead, which covers any set of weekdays. A local time
    -- that does not exist on a spring-forward day maps to the instant one offset later (02:30
    -- becomes 03:30); an ambiguous one on a fall-back day maps to one instant. Either way each
    -- (date, time) pair is exactly one slot, so a daily 02:30 runs once on both change days.
    FOR v_day_offset IN -1..8 LOOP
        v_day := (p_after AT TIME ZONE p_timezone)::date + v_day_offset;
        CONTINUE WHEN p_on_days IS NOT NULL
            AND NOT extract(ISODOW FROM v_day)::smallint = ANY(p_on_days);
        SELECT min((v_day + t.at_time) AT TIME ZONE p_timezone) INTO v_slot
        FROM unnest(p_at_times) AS t (at_time)
        WHERE (v_day + t.at_time) AT TIME ZONE p_timezone > p_after;
        IF v_slot IS NOT NULL THEN
            RETURN v_slot;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.next_slot(interval, interval, time[], smallint[], text, timestamptz) IS
'The first slot strictly after p_after: for an every cadence aligned to the clock and shifted by '
'p_offset (NULL for none), for a calendar '
'schedule (times of day, optional ISO weekdays 1=Mon..7=Sun) in the IANA zone p_timezone, correct '
'across daylight-saving changes.';

CREATE OR REPLACE FUNCTION tickq.slots_between(
    p_every interval,
    p_offset interval,
    p_at_times time[],
    p_on_days smallint[],
    p_timezone text,
    p_since timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_seconds numeric;
    v_offset numeric;
    v_count integer := 0;
    v_slot timestamptz := p_since;
BEGIN
    IF p_since >= p_now THEN
        RETURN 0;
    END IF;
    IF p_every IS NOT NULL THEN
        v_seconds := extract(EPOCH FROM p_every);
        v_offset := coalesce(extract(EPOCH FROM p_offset), 0);
        -- Capped below what an integer holds (claims add the slot due): a one-second kind asleep
        -- for 70 years would overflow it.
        RETURN least(floor((extract(EPOCH FROM p_now) - v_offset) / v_seconds)
            - floor((extract(EPOCH FROM p_since) - v_offset) / v_seconds), 2147483646)::integer;
    END IF;
    LOOP
        v_slot := tickq.next_slot(p_every, p_offset, p_at_times, p_on_days, p_timezone, v_slot);
        EXIT WHEN v_slot IS NULL OR v_slot > p_now OR v_count >= 100000;
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;
COMMENT ON FUNCTION tickq.slots_between(interval, interval, time[], smallint[], text, timestamptz, timestamptz) IS
'How many slots of a schedule fall in (p_since, p_now]: the slots a late run merges.';

CREATE OR REPLACE FUNCTION tickq.format_duration(
    p_duration interval,
    p_now timestamptz DEFAULT now()
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
COMMENT ON FUNCTION tickq.format_duration(interval, timestamptz) IS
'A duration as the registry writes it: "5m", "1h30m", "1d". Whole seconds; p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.describe_calendar(
    p_at_times time[],
    p_on_days smallint[],
    p_timezone text,
    p_now timestamptz DEFAULT now()
) RETURNS text
LANGUAGE sql STABLE
AS $$
    SELECT 'at ' || (
        SELECT string_agg(to_char(t.at_time, 'HH24:MI'), ',' ORDER BY t.at_time)
        FROM unnest(p_at_times) AS t (at_time)
    ) || coalesce(' on ' || (
        SELECT string_agg((ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[d.day], ','
            ORDER BY d.day)
        FROM unnest(p_on_days) AS d (day)
    ), '') || ' ' || p_timezone
$$;
COMMENT ON FUNCTION tickq.describe_calendar(time[], smallint[], text, timestamptz) IS
'A calendar schedule as one line: "at 06:00,18:00 on mon Europe/London". p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.describe_schedule(
    p_every interval,
    p_offset interval,
    p_at_times time[],
    p_on_days smallint[],
    p_timezone text,
    p_now timestamptz DEFAULT now()
) RETURNS text
LANGUAGE sql STABLE
AS $$
    -- One expression, so the planner inlines it into queue_status: an every cadence costs no call.
    SELECT CASE
        WHEN p_every IS NOT NULL THEN 'every ' || tickq.format_duration(p_every, p_now)
            || CASE WHEN p_offset IS NOT NULL THEN ' offset ' || tickq.format_duration(p_offset, p_now) ELSE '' END
        ELSE tickq.describe_calendar(p_at_times, p_on_days, p_timezone, p_now)
    END
$$;
COMMENT ON FUNCTION tickq.describe_schedule(interval, interval, time[], smallint[], text, timestamptz) IS
'A schedule as one line for people: "every 5m", "every 1h offset 20m" or '
'"at 06:00,18:00 on mon Europe/London".';
