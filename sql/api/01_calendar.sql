-- Calendar arithmetic: which local days a calendar schedule takes (days of the month, months,
-- weekdays, nth and last weekdays, cron's fields) and which instants of such a day are slots.
-- tickq.next_slot and tickq.slots_between (01_schedule.sql) ask these; nothing else computes
-- a calendar slot.
--
-- Clock changes: a wall-clock time (an at time, or a cron string whose minute and hour are
-- single numbers) in a spring-forward gap runs one gap later, an ambiguous one at its second
-- occurrence, and two times on one instant run once. A cron string with a list, range, step or
-- * in its minute or hour runs on real time: every instant whose local time matches, so both
-- occurrences of a repeated hour and nothing in a skipped one.

CREATE OR REPLACE FUNCTION tickq.cron_field(
    p_field text,
    p_what text,
    p_low integer,
    p_high integer,
    p_names text[]
) RETURNS smallint[]
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_part text;
    v_bound text;
    v_ends integer[];
    v_step integer;
    v_values integer[] := ARRAY[]::integer[];
BEGIN
    FOREACH v_part IN ARRAY string_to_array(lower(p_field), ',') LOOP
        IF v_part !~ '^(\*|[0-9a-z]{1,3}(-[0-9a-z]{1,3})?)(/[0-9]{1,3})?$' THEN
            RAISE EXCEPTION '% field "%": "%" is not a number, a name, a range, a step or *',
                p_what, p_field, v_part USING ERRCODE = '22023';
        END IF;
        v_ends := ARRAY[]::integer[];
        FOREACH v_bound IN ARRAY string_to_array(split_part(v_part, '/', 1), '-') LOOP
            v_ends := v_ends || CASE
                WHEN v_bound = '*' THEN NULL
                WHEN v_bound ~ '^[0-9]+$' THEN v_bound::integer
                ELSE array_position(p_names, v_bound) - 1 + p_low END;
            IF v_bound <> '*' AND (v_ends[cardinality(v_ends)] IS NULL
                OR NOT v_ends[cardinality(v_ends)] BETWEEN p_low AND p_high) THEN
                RAISE EXCEPTION '%', format('%s field "%s": %s is not a %s (%s-%s%s)', p_what, p_field, v_bound,
                    p_what, p_low, p_high, CASE WHEN p_names IS NOT NULL
                        THEN ' or ' || p_names[1] || '-' || p_names[cardinality(p_names)] ELSE '' END)
                    USING ERRCODE = '22023';
            END IF;
        END LOOP;
        v_step := coalesce(nullif(split_part(v_part, '/', 2), '')::integer, 1);
        IF v_step < 1 OR v_step > p_high - p_low + 1 THEN
            RAISE EXCEPTION '% field "%": a step must be from 1 to %, got %', p_what, p_field,
                p_high - p_low + 1, v_step USING ERRCODE = '22023';
        END IF;
        IF v_ends[1] IS NULL THEN
            v_ends := ARRAY[p_low, CASE WHEN p_what = 'day-of-week' THEN 6 ELSE p_high END];
        ELSIF cardinality(v_ends) = 1 THEN
            -- "5/15" counts from 5 to the field's end, as Vixie cron does.
            v_ends := ARRAY[v_ends[1], CASE WHEN v_part LIKE '%/%' THEN p_high ELSE v_ends[1] END];
        END IF;
        IF v_ends[1] > v_ends[2] THEN
            RAISE EXCEPTION '% field "%": the range %-% runs backwards', p_what, p_field, v_ends[1], v_ends[2]
                USING ERRCODE = '22023';
        END IF;
        v_values := v_values || ARRAY(SELECT generate_series(v_ends[1], v_ends[2], v_step));
    END LOOP;
    RETURN ARRAY(SELECT DISTINCT v.value::smallint FROM unnest(v_values) AS v (value) ORDER BY 1);
END
$$;
COMMENT ON FUNCTION tickq.cron_field(text, text, integer, integer, text[]) IS
'The values one cron field takes (lists, ranges, steps, *, names counted from p_low), sorted; '
'raises 22023 naming the field for anything else.';

CREATE OR REPLACE FUNCTION tickq.cron_parse(
    p_cron text,
    p_timezone text
) RETURNS tickq.calendar
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_text text := lower(btrim(p_cron));
    v_fields text[];
    v_calendar tickq.calendar;
BEGIN
    v_text := CASE v_text
        WHEN '@hourly' THEN '0 * * * *'
        WHEN '@daily' THEN '0 0 * * *' WHEN '@midnight' THEN '0 0 * * *'
        WHEN '@weekly' THEN '0 0 * * 0'
        WHEN '@monthly' THEN '0 0 1 * *'
        WHEN '@yearly' THEN '0 0 1 1 *' WHEN '@annually' THEN '0 0 1 1 *'
        ELSE v_text END;
    IF v_text = '@reboot' THEN
        RAISE EXCEPTION '@reboot runs once when cron starts, and tickq runs on a schedule only: '
            'give a schedule, or start the job with the system''s own boot service'
            USING ERRCODE = '22023';
    ELSIF v_text LIKE '@%' THEN
        RAISE EXCEPTION 'unknown form "%" (tickq takes @hourly, @daily, @weekly, @monthly, @yearly '
            'and @annually)', left(p_cron, 40) USING ERRCODE = '22023';
    END IF;
    v_fields := regexp_split_to_array(v_text, '\s+');
    IF cardinality(v_fields) IN (6, 7) THEN
        RAISE EXCEPTION 'has % fields: tickq takes the five of a crontab (minute hour day-of-month '
            'month day-of-week), with no seconds or year field', cardinality(v_fields)
            USING ERRCODE = '22023';
    ELSIF cardinality(v_fields) <> 5 THEN
        RAISE EXCEPTION 'must have five fields (minute hour day-of-month month day-of-week), got %',
            cardinality(v_fields) USING ERRCODE = '22023';
    END IF;
    v_calendar.minutes := tickq.cron_field(v_fields[1], 'minute', 0, 59, NULL);
    v_calendar.hours := tickq.cron_field(v_fields[2], 'hour', 0, 23, NULL);
    v_calendar.days := tickq.cron_field(v_fields[3], 'day-of-month', 1, 31, NULL);
    v_calendar.months := tickq.cron_field(v_fields[4], 'month', 1, 12,
        ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']);
    -- Weekdays as ISO numbers (cron's 0 and 7 are both Sunday).
    v_calendar.weekdays := ARRAY(SELECT DISTINCT CASE WHEN d.day = 0 THEN 7 ELSE d.day END::smallint
        FROM unnest(tickq.cron_field(v_fields[5], 'day-of-week', 0, 7,
            ARRAY['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'])) AS d (day) ORDER BY 1);
    -- Vixie cron: a field that starts with * leaves the day to the other one; when neither does,
    -- a day matches if either matches.
    v_calendar.either := v_fields[3] NOT LIKE '*%' AND v_fields[5] NOT LIKE '*%';
    v_calendar.days := CASE WHEN cardinality(v_calendar.days) < 31 THEN v_calendar.days END;
    v_calendar.months := CASE WHEN cardinality(v_calendar.months) < 12 THEN v_calendar.months END;
    v_calendar.weekdays := CASE WHEN cardinality(v_calendar.weekdays) < 7 THEN v_calendar.weekdays END;
    IF v_fields[1] ~ '^[0-9]+$' AND v_fields[2] ~ '^[0-9]+$' THEN
        v_calendar.times := ARRAY[make_time(v_calendar.hours[1], v_calendar.minutes[1], 0)];
        v_calendar.minutes := NULL;
        v_calendar.hours := NULL;
    END IF;
    v_calendar.timezone := p_timezone;
    RETURN v_calendar;
END
$$;
COMMENT ON FUNCTION tickq.cron_parse(text, text) IS
'Internal to tickq.cron_calendar: a five-field cron string (or @hourly, @daily, @weekly, @monthly, '
'@yearly, @annually) in zone p_timezone as a tickq.calendar: single-number minute and hour as a '
'wall-clock time, others on real time, Vixie''s day-of-month OR day-of-week rule. Raises 22023 '
'naming what is wrong (@reboot and six-field forms included).';

CREATE OR REPLACE FUNCTION tickq.cron_problem(
    p_cron text
) RETURNS text
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    PERFORM tickq.cron_calendar(p_cron, 'UTC');
    RETURN NULL;
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN SQLERRM;
END
$$;
COMMENT ON FUNCTION tickq.cron_problem(text) IS
'What is wrong with a cron string (tickq.cron_calendar''s refusal), or NULL.';

CREATE OR REPLACE FUNCTION tickq.calendar_of(
    p_schedule tickq.schedule
) RETURNS tickq.calendar
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN p_schedule.cron IS NOT NULL THEN tickq.cron_calendar(p_schedule.cron, p_schedule.timezone)
        ELSE ROW(p_schedule.at_times, NULL, NULL, p_schedule.on_days, p_schedule.days, p_schedule.months, false,
            p_schedule.timezone)::tickq.calendar END
$$;
COMMENT ON FUNCTION tickq.calendar_of(tickq.schedule) IS
'The calendar of a schedule (its at_times, on_days, days, months, or its cron string) as one '
'tickq.calendar; an every cadence is not read.';

CREATE OR REPLACE FUNCTION tickq.calendar_day(
    p_calendar tickq.calendar,
    p_day date
) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    -- Simple expressions only (no query), so a walk over many days stays cheap.
    v_dom integer := extract(DAY FROM p_day)::integer;
    v_dow integer := extract(ISODOW FROM p_day)::integer;
    v_dim integer := extract(DAY FROM date_trunc('month', p_day) + interval '1 month - 1 day')::integer;
    v_day_ok boolean;
    v_weekday_ok boolean;
BEGIN
    -- days: 1..31, or -1 (the last day) .. -31 from the month's end; weekdays: ISO 1..7, nth
    -- 10 * n + weekday, last 90 + weekday. Filters combine with AND (cron's either: days OR
    -- weekdays).
    IF p_calendar.months IS NOT NULL AND NOT extract(MONTH FROM p_day)::smallint = ANY(p_calendar.months) THEN
        RETURN false;
    END IF;
    v_day_ok := p_calendar.days IS NULL OR v_dom = ANY(p_calendar.days) OR v_dom - v_dim - 1 = ANY(p_calendar.days);
    v_weekday_ok := p_calendar.weekdays IS NULL OR v_dow = ANY(p_calendar.weekdays)
        OR 10 * ((v_dom - 1) / 7 + 1) + v_dow = ANY(p_calendar.weekdays)
        OR (v_dom + 7 > v_dim AND 90 + v_dow = ANY(p_calendar.weekdays));
    RETURN CASE WHEN p_calendar.either THEN v_day_ok OR v_weekday_ok ELSE v_day_ok AND v_weekday_ok END;
END
$$;
COMMENT ON FUNCTION tickq.calendar_day(tickq.calendar, date) IS
'True when the local date p_day is a day of the calendar (months, days of the month, weekdays, '
'nth and last weekdays; cron''s OR rule).';

CREATE OR REPLACE FUNCTION tickq.calendar_day_slots(
    p_calendar tickq.calendar,
    p_day date
) RETURNS SETOF timestamptz
LANGUAGE sql STABLE
AS $$
    -- Wall-clock times: each maps to one instant (PostgreSQL reads a time in a gap with the
    -- offset before it, an ambiguous one with the offset after it).
    SELECT (p_day + t.at_time) AT TIME ZONE p_calendar.timezone
    FROM unnest(p_calendar.times) AS t (at_time)
    UNION
    -- Real time: the instants whose local time is the wall time, with the offset after a change
    -- and the one a day before it (both when the hour repeats, none when it is skipped).
    SELECT c.at
    FROM unnest(p_calendar.hours) AS h (hour)
    CROSS JOIN unnest(p_calendar.minutes) AS m (minute)
    CROSS JOIN LATERAL (SELECT p_day + make_time(h.hour, m.minute, 0) AS wall) AS w
    CROSS JOIN LATERAL (SELECT w.wall AT TIME ZONE p_calendar.timezone AS later) AS l
    CROSS JOIN LATERAL (VALUES (l.later), ((w.wall - ((l.later - interval '1 day') AT TIME ZONE p_calendar.timezone
        - (l.later - interval '1 day') AT TIME ZONE 'UTC')) AT TIME ZONE 'UTC')) AS c (at)
    WHERE c.at AT TIME ZONE p_calendar.timezone = w.wall
$$;
COMMENT ON FUNCTION tickq.calendar_day_slots(tickq.calendar, date) IS
'The slots of the local date p_day (not judged against the day filters): wall-clock times by '
'tickq''s daylight-saving rule, real-time minutes and hours as they occur.';

CREATE OR REPLACE FUNCTION tickq.calendar_day_first(
    p_calendar tickq.calendar,
    p_day date,
    p_after timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_zone text := p_calendar.timezone;
    -- one offset from the day before to the day after: wall times map to instants in order
    v_steady boolean := v_zone = 'UTC' OR ((p_day - 1)::timestamp AT TIME ZONE 'UTC' AT TIME ZONE v_zone)
        - (p_day - 1)::timestamp = ((p_day + 2)::timestamp AT TIME ZONE 'UTC' AT TIME ZONE v_zone) - (p_day + 2)::timestamp;
    v_floor timestamp := (p_after AT TIME ZONE v_zone) - CASE WHEN v_steady THEN interval '0' ELSE interval '3 hours' END;
    v_best timestamptz;
    v_wall timestamp;
    v_later timestamptz;
    v_time time;
    v_hour smallint;
    v_minute smallint;
BEGIN
    -- tickq.calendar_day_slots' rule, walked in wall-clock order with simple expressions only,
    -- from three hours of wall time before p_after to three past the first slot found (no
    -- clock change moves a slot further), so a minutely cron costs a few steps, not a day's
    -- 1,440; around a day whose zone keeps its offset (most days), from p_after to the first
    -- slot found: wall times are instants in the same order.
    IF p_calendar.times IS NOT NULL THEN
        FOREACH v_time IN ARRAY p_calendar.times LOOP
            v_later := (p_day + v_time) AT TIME ZONE v_zone;
            IF v_later > p_after AND (v_best IS NULL OR v_later < v_best) THEN
                v_best := v_later;
            END IF;
        END LOOP;
        RETURN v_best;
    END IF;
    <<hours>>
    FOREACH v_hour IN ARRAY p_calendar.hours LOOP
        CONTINUE WHEN p_day + make_time(v_hour, 59, 0) < v_floor;  -- the whole hour before the floor
        FOREACH v_minute IN ARRAY p_calendar.minutes LOOP
            v_wall := p_day + make_time(v_hour, v_minute, 0);
            CONTINUE WHEN v_wall < v_floor;
            EXIT hours WHEN v_best IS NOT NULL AND v_wall > (v_best AT TIME ZONE v_zone) + interval '3 hours';
            v_later := v_wall AT TIME ZONE v_zone;
            IF v_later AT TIME ZONE v_zone = v_wall AND v_later > p_after AND (v_best IS NULL OR v_later < v_best) THEN
                v_best := v_later;
                EXIT hours WHEN v_steady;
            END IF;
            CONTINUE WHEN v_steady;
            -- the first occurrence of a repeated wall time, read with the offset of a day before
            v_later := (v_wall - ((v_later - interval '1 day') AT TIME ZONE v_zone
                - (v_later - interval '1 day') AT TIME ZONE 'UTC')) AT TIME ZONE 'UTC';
            IF v_later AT TIME ZONE v_zone = v_wall AND v_later > p_after AND (v_best IS NULL OR v_later < v_best) THEN
                v_best := v_later;
            END IF;
        END LOOP;
    END LOOP;
    RETURN v_best;
END
$$;
COMMENT ON FUNCTION tickq.calendar_day_first(tickq.calendar, date, timestamptz) IS
'The first slot of the local date p_day strictly after p_after (the day not judged against the '
'day filters), by tickq.calendar_day_slots'' rule; NULL when none.';

CREATE OR REPLACE FUNCTION tickq.calendar_next_walk(
    p_calendar tickq.calendar,
    p_after timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    -- From the local day before (a gap at midnight can move a slot across a date) through 56
    -- years ahead: the longest a valid calendar waits is a Monday the 29th of February (40 years
    -- around 2100).
    v_day date := (p_after AT TIME ZONE p_calendar.timezone)::date - 1;
    v_last date := v_day + 20455;
    v_slot timestamptz;
    v_dom integer;
    v_dow integer;
    v_dim integer;
    v_day_ok boolean;
    v_weekday_ok boolean;
BEGIN
    WHILE v_day <= v_last LOOP
        IF p_calendar.months IS NOT NULL AND NOT extract(MONTH FROM v_day)::smallint = ANY(p_calendar.months) THEN
            -- a month the calendar does not take: on to the next month's first day
            v_day := (date_trunc('month', v_day) + interval '1 month')::date;
            CONTINUE;
        END IF;
        -- tickq.calendar_day, inline: a call per day would cost more than the rest of the walk.
        v_dom := extract(DAY FROM v_day)::integer;
        v_dow := extract(ISODOW FROM v_day)::integer;
        v_dim := extract(DAY FROM date_trunc('month', v_day) + interval '1 month - 1 day')::integer;
        v_day_ok := p_calendar.days IS NULL OR v_dom = ANY(p_calendar.days)
            OR v_dom - v_dim - 1 = ANY(p_calendar.days);
        v_weekday_ok := p_calendar.weekdays IS NULL OR v_dow = ANY(p_calendar.weekdays)
            OR 10 * ((v_dom - 1) / 7 + 1) + v_dow = ANY(p_calendar.weekdays)
            OR (v_dom + 7 > v_dim AND 90 + v_dow = ANY(p_calendar.weekdays));
        IF (p_calendar.either AND (v_day_ok OR v_weekday_ok)) OR (v_day_ok AND v_weekday_ok) THEN
            v_slot := tickq.calendar_day_first(p_calendar, v_day, p_after);
            IF v_slot IS NOT NULL THEN
                RETURN v_slot;
            END IF;
        END IF;
        v_day := v_day + 1;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.calendar_next_walk(tickq.calendar, timestamptz) IS
'The first slot of a calendar strictly after p_after, or NULL when none falls within 56 years, '
'found by walking local days from the one before p_after''s (tickq.calendar_day_first on each day '
'the calendar takes): the reading every clock change is judged by.';

CREATE OR REPLACE FUNCTION tickq.calendar_last(
    p_calendar tickq.calendar,
    p_since timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_day date := (p_now AT TIME ZONE p_calendar.timezone)::date + 1;
    v_first date := (p_since AT TIME ZONE p_calendar.timezone)::date - 1;
    v_slot timestamptz;
BEGIN
    -- Walked back from p_now's local day: the latest slot is on the first day that has one.
    WHILE v_day >= v_first LOOP
        IF tickq.calendar_day(p_calendar, v_day) THEN
            v_slot := (SELECT max(s.slot) FROM tickq.calendar_day_slots(p_calendar, v_day) AS s (slot)
                WHERE s.slot > p_since AND s.slot <= p_now);
            IF v_slot IS NOT NULL THEN
                RETURN v_slot;
            END IF;
        END IF;
        v_day := v_day - 1;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.calendar_last(tickq.calendar, timestamptz, timestamptz) IS
'The latest slot of a calendar in (p_since, p_now], or NULL when none.';
