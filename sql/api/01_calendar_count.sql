-- Counting a calendar's slots over a span (tickq.slots_between, 01_schedule.sql): the capacity
-- verdict asks it of every calendar kind over a week and a year, the month ends over three days,
-- a claim of every calendar kind it leases.
--
-- On a day whose zone keeps one offset around it the slots are the day's wall times less the
-- offset, from its local midnight to the next: such a day wholly outside the span counts
-- nothing, wholly inside as many as the first such day, across an end its wall times in the
-- span, with no walk of instants. Only the days of a clock change are counted slot by slot
-- (tickq.calendar_day_slots), as the walk always did.

CREATE OR REPLACE FUNCTION tickq.calendar_steady_offset(
    p_zone text,
    p_day date
) RETURNS interval
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_at timestamptz := (p_day - 2)::timestamp AT TIME ZONE 'UTC';
    v_offset interval := (v_at AT TIME ZONE p_zone) - (v_at AT TIME ZONE 'UTC');
BEGIN
    -- Read every six hours of UTC from two days before the day to two after: the instants of
    -- the day's wall times and the day before each (tickq.calendar_day_slots reads the offset a
    -- day before a slot) all lie between, whatever the offset (-12 to +14 hours). No zone
    -- changes its offset and back within six hours.
    IF p_zone = 'UTC' THEN
        RETURN interval '0';
    END IF;
    FOR v_step IN 1..16 LOOP
        v_at := v_at + interval '6 hours';
        IF (v_at AT TIME ZONE p_zone) - (v_at AT TIME ZONE 'UTC') <> v_offset THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN v_offset;
END
$$;
COMMENT ON FUNCTION tickq.calendar_steady_offset(text, date) IS
'The UTC offset zone p_zone keeps from two days before the local date p_day to two days after '
'(local time less UTC), or NULL when it changes in between: on such a day every wall time is '
'one instant, the wall time less the offset.';

CREATE OR REPLACE FUNCTION tickq.calendar_count(
    p_calendar tickq.calendar,
    p_since timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_day date := (p_since AT TIME ZONE p_calendar.timezone)::date - 1;
    v_end date := (p_now AT TIME ZONE p_calendar.timezone)::date;
    v_count integer := 0;
    v_midnight timestamptz;
    v_inside boolean;
    v_day_slots integer;
    v_steady_slots integer;
BEGIN
    -- A claim asks this of every calendar kind it leases, nearly always before the kind's next
    -- slot: the first slot after p_since is found in a few steps, where counting walks three
    -- local days.
    IF tickq.calendar_next(p_calendar, p_since) > p_now THEN
        RETURN 0;
    END IF;
    -- From the local day before p_since's to the day after p_now's (a clock change can move a
    -- slot across a date); at most 100,000 (a minutely cron asleep for months counts no further).
    WHILE v_day <= v_end + 1 AND v_count < 100000 LOOP
        IF tickq.calendar_day(p_calendar, v_day) THEN
            -- In one offset the day's slots are its wall times less the offset, from its local
            -- midnight to the next: none in the span when the day lies outside, as many as every
            -- such day when it lies inside. A day without one offset: slot by slot.
            v_midnight := (v_day::timestamp - tickq.calendar_steady_offset(p_calendar.timezone, v_day)) AT TIME ZONE 'UTC';
            v_inside := v_midnight > p_since AND v_midnight + interval '24 hours' <= p_now;
            IF v_midnight + interval '24 hours' <= p_since OR v_midnight > p_now THEN
                v_day_slots := 0;
            ELSIF v_inside AND v_steady_slots IS NOT NULL THEN
                v_day_slots := v_steady_slots;
            ELSIF v_midnight IS NOT NULL THEN
                v_day_slots := (SELECT count(*)::integer
                    FROM (SELECT t.at_time FROM unnest(p_calendar.times) AS t (at_time)
                        UNION
                        SELECT make_time(h.hour, m.minute, 0)
                        FROM unnest(p_calendar.hours) AS h (hour) CROSS JOIN unnest(p_calendar.minutes) AS m (minute)
                    ) AS w (at_time)
                    WHERE v_midnight + (w.at_time - time '00:00') > p_since
                        AND v_midnight + (w.at_time - time '00:00') <= p_now);
                v_steady_slots := CASE WHEN v_inside THEN v_day_slots ELSE v_steady_slots END;
            ELSE
                v_day_slots := (SELECT count(*)::integer
                    FROM tickq.calendar_day_slots(p_calendar, v_day) AS s (slot)
                    WHERE s.slot > p_since AND s.slot <= p_now);
            END IF;
            v_count := v_count + v_day_slots;
        END IF;
        v_day := v_day + 1;
    END LOOP;
    RETURN least(v_count, 100000);
END
$$;
COMMENT ON FUNCTION tickq.calendar_count(tickq.calendar, timestamptz, timestamptz) IS
'How many slots of a calendar fall in (p_since, p_now], at most 100,000: a day in a zone that '
'keeps its offset around it by its wall times (as the first such day when wholly inside the span, '
'nothing when wholly outside), a day of a clock change slot by slot.';
