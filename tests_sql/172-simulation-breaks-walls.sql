-- tickq.simulation_breaks reads a day's first and last slot, and the last slot before a break,
-- from the calendar's first and last wall time where the kind's zone keeps its offset over the
-- days it reads (tickq.simulation_day_walls), and from the slots elsewhere: over cron strings and
-- calendar times with day rules in five zones (one whose clock moves half an hour, one that never
-- moves, a midnight slot on the first day read, a calendar with none before some breaks), in
-- windows with and without a clock change, for a day's and a week's shift, it gives what reading
-- every day's slots gives (its code before, the reference), row for row.
BEGIN;
SELECT plan(3);

CREATE FUNCTION pg_temp.breaks_from_slots(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, zone text, first_at timestamptz, last_at timestamptz, back_to timestamptz)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_days integer := (extract(EPOCH FROM p_shift) / 86400)::integer;
    v_kind tickq.job_kind;
    v_calendar tickq.calendar;
    v_first date;
    v_last date;
    v_takes boolean[];
    v_day date;
    v_edge timestamptz;
BEGIN
    -- For each calendar kind with day rules, each local day d from about p_from to about p_until
    -- whose rules differ from those of d + p_shift (one has slots, the other none): its slots
    -- that differ (first_at, last_at: d's own, or d + p_shift's less p_shift) and the last slot
    -- before d (back_to: the slots before d are the same in both stretches, zone permitting).
    -- A stretch from p_from repeats only up to back_to when that is at or after p_from, else up
    -- to first_at (tickq.simulation_repeats_until). Each kind also gets a last row at the end of
    -- the days read, whose back_to is its last slot before it: nothing later is known. Exact
    -- only where the kind's zone keeps its offset: the caller walks a kind whose does not.
    FOR v_kind IN SELECT * FROM tickq.job_kind AS k WHERE k.enabled AND tickq.simulation_day_rules(k) ORDER BY k.name LOOP
        v_calendar := tickq.calendar_of(tickq.schedule_of(v_kind));
        v_first := (p_from AT TIME ZONE v_kind.timezone)::date - 2;
        v_last := (p_until AT TIME ZONE v_kind.timezone)::date + 8;
        v_takes := ARRAY(SELECT tickq.calendar_day(v_calendar, d::date)
            FROM generate_series(v_first, v_last + v_days, interval '1 day') AS d ORDER BY d);
        FOR i IN 1..(v_last - v_first + 1) LOOP
            CONTINUE WHEN v_takes[i] = v_takes[i + v_days];
            v_day := v_first + i - 1;
            kind := v_kind.name;
            zone := v_kind.timezone;
            SELECT min(s.at) - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END,
                max(s.at) - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END
            INTO first_at, last_at
            FROM tickq.calendar_day_slots(v_calendar, CASE WHEN v_takes[i] THEN v_day ELSE v_day + v_days END) AS s (at);
            back_to := tickq.calendar_last(v_calendar, (v_first::timestamp AT TIME ZONE v_kind.timezone),
                (v_day::timestamp AT TIME ZONE v_kind.timezone) - interval '1 microsecond');
            RETURN NEXT;
        END LOOP;
        v_edge := (v_last + 1)::timestamp AT TIME ZONE v_kind.timezone;
        kind := v_kind.name;
        zone := v_kind.timezone;
        first_at := v_edge;
        last_at := v_edge;
        back_to := tickq.calendar_last(v_calendar, (v_first::timestamp AT TIME ZONE v_kind.timezone),
            v_edge - interval '1 microsecond');
        RETURN NEXT;
    END LOOP;
END
$$;

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "weekly": {"command": ["x"], "cron": "10 3 * * 2", "timeout": 60},
        "monthly_ny": {"command": ["x"], "cron": "30 1 15 * *", "timeout": 60, "timezone": "America/New_York"},
        "office_london": {"command": ["x"], "cron": "3,18,33,48 9-17 * * 1-5", "timeout": 60,
            "timezone": "Europe/London"},
        "night_ny": {"command": ["x"], "cron": "*/20 1-2 * * 0,6", "timeout": 60, "timezone": "America/New_York"},
        "midnight": {"command": ["x"], "cron": "0 0 * * 1,4", "timeout": 60},
        "midnight_howe": {"command": ["x"], "cron": "0 0,2 * * 0", "timeout": 60, "timezone": "Australia/Lord_Howe"},
        "closing": {"command": ["x"], "at": ["06:00", "18:30"], "on": ["mon", "last fri"], "days": [1, -1],
            "timezone": "Asia/Kolkata", "timeout": 60},
        "quarterly": {"command": ["x"], "at": ["02:30", "23:45"], "days": [-1], "months": ["mar", "jun", "sep", "dec"],
            "timezone": "Europe/London", "timeout": 60},
        "second_tue": {"command": ["x"], "at": ["12:00"], "on": ["2nd tue"], "timezone": "Australia/Lord_Howe",
            "timeout": 60},
        "nightly": {"command": ["x"], "cron": "*/5 1 * * *", "timeout": 60}
    }}', '2026-01-01 00:00Z');

CREATE TEMP TABLE windows (starts timestamptz, ends timestamptz) ON COMMIT DROP;
INSERT INTO windows VALUES
    -- June: no zone changes its clock
    ('2026-06-01 00:00Z', '2026-07-02 00:20Z'),
    -- a month end of three days
    ('2026-06-28 23:55Z', '2026-07-02 00:20Z'),
    -- March to April: New York, London and Lord Howe change their clocks
    ('2026-03-01 07:00Z', '2026-04-10 00:00Z'),
    -- a week across the first Sunday of October (Lord Howe) and another across the last (London)
    ('2026-10-01 12:00Z', '2026-10-08 12:00Z'),
    ('2026-10-21 12:00Z', '2026-10-28 12:00Z'),
    -- midnight of a first day read (a slot exactly at its start)
    ('2026-06-03 00:00Z', '2026-06-06 00:00Z');

SELECT results_eq(
    $$SELECT w.starts, b.* FROM windows AS w
      CROSS JOIN LATERAL tickq.simulation_breaks(w.starts, w.ends, '1 day') WITH ORDINALITY AS b$$,
    $$SELECT w.starts, b.* FROM windows AS w
      CROSS JOIN LATERAL pg_temp.breaks_from_slots(w.starts, w.ends, '1 day') WITH ORDINALITY AS b$$,
    'a day''s shift: the breaks read from the slots');
SELECT results_eq(
    $$SELECT w.starts, b.* FROM windows AS w
      CROSS JOIN LATERAL tickq.simulation_breaks(w.starts, w.ends, '7 days') WITH ORDINALITY AS b$$,
    $$SELECT w.starts, b.* FROM windows AS w
      CROSS JOIN LATERAL pg_temp.breaks_from_slots(w.starts, w.ends, '7 days') WITH ORDINALITY AS b$$,
    'a week''s shift: the breaks read from the slots');
SELECT cmp_ok((SELECT count(*) FROM windows AS w
        CROSS JOIN LATERAL tickq.simulation_breaks(w.starts, w.ends, '1 day') AS b
        WHERE b.back_to IS NULL AND b.first_at <> b.last_at), '>', 0::bigint,
    'some breaks have no slot before them in the days read');

SELECT * FROM finish();
ROLLBACK;
