-- The next slot of a calendar (tickq.calendar_next), asked by tickq.next_slot for every claim and
-- report of a calendar kind and by the simulator's calm stretches for every run they write.
--
-- tickq.calendar_next_walk (01_calendar.sql) walks local days from the day before p_after's,
-- asking every day's first slot: the reading every clock change is judged by. On days whose zone
-- keeps one offset around them (tickq.calendar_steady_offset) a slot is its wall time less the
-- offset and the days' slots come in wall-clock order, so the first slot after p_after is the
-- first wall time after p_after's on its own day, else the first of the next day the calendar
-- takes: tickq.calendar_next_steady finds it in a few steps. Anything else (a clock change near,
-- no slot within a week) is the walk's.

CREATE OR REPLACE FUNCTION tickq.calendar_next_steady(
    p_calendar tickq.calendar,
    p_after timestamptz
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_zone text := p_calendar.timezone;
    v_wall timestamp := p_after AT TIME ZONE p_calendar.timezone;
    v_day date := (p_after AT TIME ZONE p_calendar.timezone)::date;
    v_hour integer := extract(HOUR FROM p_after AT TIME ZONE p_calendar.timezone)::integer;
    v_minute integer := extract(MINUTE FROM p_after AT TIME ZONE p_calendar.timezone)::integer;
    v_offset interval;
    v_slot timestamp;
    v_best timestamp;
    v_time time;
    v_i integer;
    v_j integer;
BEGIN
    IF p_calendar.times IS NULL AND (coalesce(cardinality(p_calendar.hours), 0) = 0
            OR coalesce(cardinality(p_calendar.minutes), 0) = 0) THEN
        RETURN NULL;  -- no calendar tickq makes: the walk's
    END IF;
    FOR v_step IN 0..6 LOOP
        v_offset := CASE WHEN v_zone = 'UTC' THEN interval '0' ELSE tickq.calendar_steady_offset(v_zone, v_day) END;
        EXIT WHEN v_offset IS NULL;
        IF (p_calendar.days IS NOT NULL OR p_calendar.weekdays IS NOT NULL OR p_calendar.months IS NOT NULL)
            AND NOT tickq.calendar_day(p_calendar, v_day) THEN  -- (no day filter: every day is one)
            NULL;
        ELSIF p_calendar.times IS NOT NULL THEN
            v_best := NULL;
            FOREACH v_time IN ARRAY p_calendar.times LOOP
                v_slot := v_day + v_time;
                IF v_slot > v_wall AND (v_best IS NULL OR v_slot < v_best) THEN
                    v_best := v_slot;
                END IF;
            END LOOP;
            IF v_best IS NOT NULL THEN
                RETURN (v_best - v_offset) AT TIME ZONE 'UTC';
            END IF;
        ELSIF v_step > 0 THEN
            RETURN (v_day + make_time(p_calendar.hours[1], p_calendar.minutes[1], 0) - v_offset) AT TIME ZONE 'UTC';
        ELSE
            -- Hours and minutes are sorted and distinct from 0 (tickq.cron_field), so the n-th is
            -- at least n - 1: the first hour from p_after's on is at most the (hour + 1)-th, the
            -- first minute after p_after's the (minute + 2)-th. Found by walking back from there.
            v_i := least(v_hour + 1, cardinality(p_calendar.hours));
            WHILE v_i > 1 AND p_calendar.hours[v_i - 1] >= v_hour LOOP
                v_i := v_i - 1;
            END LOOP;
            IF p_calendar.hours[v_i] = v_hour THEN
                v_j := least(v_minute + 2, cardinality(p_calendar.minutes));
                WHILE v_j > 1 AND p_calendar.minutes[v_j - 1] > v_minute LOOP
                    v_j := v_j - 1;
                END LOOP;
                IF p_calendar.minutes[v_j] > v_minute THEN  -- hh:mm:00 after hh:mm:ss only at a later minute
                    RETURN (v_day + make_time(v_hour, p_calendar.minutes[v_j], 0) - v_offset) AT TIME ZONE 'UTC';
                END IF;
                v_i := v_i + 1;
            END IF;
            IF v_i <= cardinality(p_calendar.hours) AND p_calendar.hours[v_i] > v_hour THEN
                RETURN (v_day + make_time(p_calendar.hours[v_i], p_calendar.minutes[1], 0) - v_offset) AT TIME ZONE 'UTC';
            END IF;
        END IF;
        v_day := v_day + 1;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.calendar_next_steady(tickq.calendar, timestamptz) IS
'For tickq.calendar_next: the first slot of p_calendar strictly after p_after where it lies on '
'p_after''s local day or the six after it and the zone keeps one offset around each '
'(tickq.calendar_steady_offset); NULL otherwise (tickq.calendar_next_walk''s to answer).';

CREATE OR REPLACE FUNCTION tickq.calendar_next(
    p_calendar tickq.calendar,
    p_after timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- Most answers lie on p_after's day or soon after, in a zone that keeps its offset: found
    -- there in a few steps (tickq.calendar_next_steady); the rest by the walk over local days.
    SELECT coalesce(tickq.calendar_next_steady(p_calendar, p_after), tickq.calendar_next_walk(p_calendar, p_after))
$$;
COMMENT ON FUNCTION tickq.calendar_next(tickq.calendar, timestamptz) IS
'The first slot of a calendar strictly after p_after, or NULL when none falls within 56 years: '
'tickq.calendar_next_steady''s answer where it has one, else tickq.calendar_next_walk''s.';
