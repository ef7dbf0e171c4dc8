-- How far a stretch of the simulator's clock comes again some days later, for every kind's slots
-- (tickq.simulate_window copies such a stretch instead of simulating it again: 19_simulate_window.sql).
--
-- A stretch from p_from until C comes again p_shift later when every enabled kind has, p_shift
-- later, the slots it has from p_from until C and its first one at or after C; or no slot in
-- either stretch (it waits through both, its due time read by no claim). And no kind is paused
-- past p_from (a pause ends at an instant, not p_shift later). Three ways to know, cheapest
-- first:
-- * an every cadence (aligned to the clock) comes again when p_shift is a whole number of
--   cadences; else it only waits through both stretches, until its first slot of either;
-- * a calendar in a zone whose offset does not change around the stretch, for a shift of whole
--   days: its slots on a local day are those of any other day its day rules take (the same
--   wall times), so only the days where the rules differ between a day and the day p_shift
--   later break the stretch (tickq.simulation_breaks: each such day once per window), and a
--   calendar without day rules (times of day, or a cron string whose day fields are `*`)
--   never does;
-- * any other (a clock change near the stretch, a shift that is not whole days): its slots
--   walked from p_from and from p_from + p_shift side by side, to the first that differs
--   (tickq.simulation_walk_until).

CREATE OR REPLACE FUNCTION tickq.zone_steady(
    p_zone text,
    p_from timestamptz,
    p_until timestamptz
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- Read at every whole hour of UTC: a change of offset, wherever it falls, differs between two
    -- of them (no zone changes and changes back within an hour).
    SELECT p_zone = 'UTC' OR (
        SELECT count(DISTINCT (h.at AT TIME ZONE p_zone) - (h.at AT TIME ZONE 'UTC')) = 1
        FROM generate_series(date_trunc('hour', p_from), p_until + interval '1 hour', interval '1 hour') AS h (at))
$$;
COMMENT ON FUNCTION tickq.zone_steady(text, timestamptz, timestamptz) IS
'True when the IANA zone p_zone keeps one UTC offset from p_from through p_until (UTC always).';

CREATE OR REPLACE FUNCTION tickq.simulation_day_rules(
    p_kind tickq.job_kind
) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    -- Read from the columns, without parsing a cron string: its day fields are all `*`, or it is
    -- @hourly, @daily or @midnight.
    SELECT p_kind.every IS NULL AND (p_kind.on_days IS NOT NULL OR p_kind.days IS NOT NULL
        OR p_kind.months IS NOT NULL
        OR (p_kind.cron IS NOT NULL AND NOT (p_kind.cron ~ '^\s*\S+\s+\S+\s+\*\s+\*\s+\*\s*$'
            OR lower(btrim(p_kind.cron)) IN ('@hourly', '@daily', '@midnight'))))
$$;
COMMENT ON FUNCTION tickq.simulation_day_rules(tickq.job_kind) IS
'True when a calendar kind takes only some days (weekdays, days of the month, months; a cron '
'string whose day fields are not all *), so its slots differ between days.';

CREATE OR REPLACE FUNCTION tickq.simulation_walk_until(
    p_kind tickq.job_kind,
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_slot timestamptz;
    v_later timestamptz;
    v_matched timestamptz;
BEGIN
    -- The kind's slots from p_from and from p_from + p_shift side by side, once: the last slot
    -- that matched is the latest C (its first slot at or after C); before any matched, C must
    -- come before the first slot of either stretch. An every cadence that p_shift does not
    -- divide only waits through both stretches. The walk stops at p_until.
    v_slot := tickq.next_slot(tickq.schedule_of(p_kind), p_from - interval '1 microsecond');
    v_later := tickq.next_slot(tickq.schedule_of(p_kind), p_from + p_shift - interval '1 microsecond');
    LOOP
        IF p_kind.every IS NOT NULL OR v_slot IS DISTINCT FROM v_later - p_shift THEN
            RETURN least(p_until, coalesce(v_matched,
                CASE WHEN v_slot IS NOT NULL AND v_later IS NOT NULL THEN least(v_slot, v_later - p_shift) END,
                p_from));
        END IF;
        EXIT WHEN v_slot IS NULL OR v_slot >= p_until;  -- the same slots as far as needed
        v_matched := v_slot;
        v_slot := tickq.next_slot(tickq.schedule_of(p_kind), v_slot);
        v_later := tickq.next_slot(tickq.schedule_of(p_kind), v_later);
    END LOOP;
    RETURN p_until;
END
$$;
COMMENT ON FUNCTION tickq.simulation_walk_until(tickq.job_kind, timestamptz, timestamptz, interval) IS
'For the simulator: the latest C, at most p_until, such that the kind''s slots from p_from until C '
'and its first one at or after C come again p_shift later (or it has none in either stretch), '
'found by walking both stretches slot by slot.';

CREATE OR REPLACE FUNCTION tickq.simulation_breaks(
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
    v_steady jsonb := '{}'::jsonb;
    v_walls time[];  -- a day's first and last wall time, where the kind's zone keeps its offset
    v_since timestamptz;
    v_taken integer;
BEGIN
    -- For each calendar kind with day rules, each local day d from about p_from to about p_until
    -- whose rules differ from those of d + p_shift (one has slots, the other none): its slots
    -- that differ (first_at, last_at: d's own, or d + p_shift's less p_shift) and the last slot
    -- before d (back_to: the slots before d are the same in both stretches, zone permitting).
    -- A stretch from p_from repeats only up to back_to when that is at or after p_from, else up
    -- to first_at (tickq.simulation_repeats_until). Each kind also gets a last row at the end of
    -- the days read, whose back_to is its last slot before it: nothing later is known. Exact
    -- only where the kind's zone keeps its offset: the caller walks a kind whose does not.
    -- Where it does (over all the days read: tickq.zone_steady, once per zone), a day's slots
    -- are its wall times in order, so the first and last are the day's first and last wall time,
    -- and the last slot before d is the last wall time of the last day before it that the rules
    -- take (v_takes), read by tickq.simulation_day_walls without reading the day's slots;
    -- elsewhere they are read from the slots (calendar_day_slots, calendar_last).
    FOR v_kind IN SELECT * FROM tickq.job_kind AS k WHERE k.enabled AND tickq.simulation_day_rules(k) ORDER BY k.name LOOP
        v_calendar := tickq.calendar_of(tickq.schedule_of(v_kind));
        v_first := (p_from AT TIME ZONE v_kind.timezone)::date - 2;
        v_last := (p_until AT TIME ZONE v_kind.timezone)::date + 8;
        v_takes := ARRAY(SELECT tickq.calendar_day(v_calendar, d::date)
            FROM generate_series(v_first, v_last + v_days, interval '1 day') AS d ORDER BY d);
        IF NOT v_steady ? v_kind.timezone THEN
            v_steady := v_steady || jsonb_build_object(v_kind.timezone, tickq.zone_steady(v_kind.timezone,
                (v_first - 2)::timestamp AT TIME ZONE 'UTC', (v_last + v_days + 3)::timestamp AT TIME ZONE 'UTC'));
        END IF;
        v_walls := CASE WHEN (v_steady ->> v_kind.timezone)::boolean THEN tickq.simulation_day_walls(v_calendar) END;
        v_since := v_first::timestamp AT TIME ZONE v_kind.timezone;
        v_taken := NULL;  -- the last day before d that the rules take (its index)
        FOR i IN 1..(v_last - v_first + 1) LOOP
            IF i > 1 AND v_takes[i - 1] THEN
                v_taken := i - 1;
            END IF;
            CONTINUE WHEN v_takes[i] = v_takes[i + v_days];
            v_day := v_first + i - 1;
            kind := v_kind.name;
            zone := v_kind.timezone;
            IF v_walls IS NOT NULL THEN
                first_at := ((CASE WHEN v_takes[i] THEN v_day ELSE v_day + v_days END) + v_walls[1]) AT TIME ZONE v_kind.timezone
                    - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END;
                last_at := ((CASE WHEN v_takes[i] THEN v_day ELSE v_day + v_days END) + v_walls[2]) AT TIME ZONE v_kind.timezone
                    - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END;
                back_to := ((v_first + v_taken - 1) + v_walls[2]) AT TIME ZONE v_kind.timezone;
            ELSE
                SELECT min(s.at) - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END,
                    max(s.at) - CASE WHEN v_takes[i] THEN '0'::interval ELSE p_shift END
                INTO first_at, last_at
                FROM tickq.calendar_day_slots(v_calendar, CASE WHEN v_takes[i] THEN v_day ELSE v_day + v_days END) AS s (at);
            END IF;
            IF v_walls IS NULL OR back_to <= v_since THEN
                back_to := tickq.calendar_last(v_calendar, v_since, (v_day::timestamp AT TIME ZONE v_kind.timezone)
                    - interval '1 microsecond');
            END IF;
            RETURN NEXT;
        END LOOP;
        v_edge := (v_last + 1)::timestamp AT TIME ZONE v_kind.timezone;
        kind := v_kind.name;
        zone := v_kind.timezone;
        first_at := v_edge;
        last_at := v_edge;
        IF v_takes[v_last - v_first + 1] THEN
            v_taken := v_last - v_first + 1;
        END IF;
        back_to := ((v_first + v_taken - 1) + v_walls[2]) AT TIME ZONE v_kind.timezone;
        IF v_walls IS NULL OR back_to <= v_since THEN
            back_to := tickq.calendar_last(v_calendar, v_since, v_edge - interval '1 microsecond');
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.simulation_breaks(timestamptz, timestamptz, interval, timestamptz) IS
'For the simulator, a shift of whole days: per calendar kind with day rules, each local day from '
'about p_from to about p_until on which they take a day and not the day p_shift later (or the '
'reverse), with the slots that differ (first_at, last_at) and the kind''s last slot before that '
'day (back_to); and a last row per kind at the end of the days read. Exact where the kind''s zone '
'keeps one offset.';

CREATE OR REPLACE FUNCTION tickq.simulation_breaks_until(
    p_from timestamptz,
    p_lo integer,
    p_hi integer,
    p_backs timestamptz[],
    p_lasts timestamptz[],
    p_after timestamptz[]
) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_i integer := p_lo;
    v_j integer := p_lo;
    v_end integer := p_hi + 1;
    v_m integer;
BEGIN
    -- What tickq.simulation_repeats_until reads from the breaks b (entries p_lo to p_hi, every
    -- zone steady): the least of back_to where back_to >= p_from, else greatest(first_at, p_from),
    -- over the breaks with last_at >= p_from. Each break's back_to comes before its first_at,
    -- so that is the least of the first back_to at or after p_from and greatest(p_from, the least
    -- first_at of the breaks with last_at >= p_from): two searches in the sorted arrays of
    -- tickq.simulation_window_breaks instead of a pass over every break.
    IF p_lo IS NULL THEN
        RETURN NULL;
    END IF;
    WHILE v_i < v_end LOOP
        v_m := (v_i + v_end) / 2;
        IF p_backs[v_m] >= p_from THEN v_end := v_m; ELSE v_i := v_m + 1; END IF;
    END LOOP;
    v_end := p_hi + 1;
    WHILE v_j < v_end LOOP
        v_m := (v_j + v_end) / 2;
        IF p_lasts[v_m] >= p_from THEN v_end := v_m; ELSE v_j := v_m + 1; END IF;
    END LOOP;
    RETURN least(CASE WHEN v_i <= p_hi THEN p_backs[v_i] END, CASE WHEN v_j <= p_hi THEN greatest(p_from, p_after[v_j]) END);
END
$$;
COMMENT ON FUNCTION tickq.simulation_breaks_until(
    timestamptz, integer, integer, timestamptz[], timestamptz[], timestamptz[]
) IS
'For the simulator: how far a stretch from p_from repeats as the breaks of the kinds'' day rules '
'tell (what tickq.simulation_repeats_until reads from them, every zone steady), found by two '
'binary searches in entries p_lo to p_hi of tickq.simulation_window_breaks'' sorted arrays: '
'back_to sorted (p_backs), last_at sorted (p_lasts) and the least first_at from each on (p_after). '
'NULL when no break bounds it.';

CREATE OR REPLACE FUNCTION tickq.simulation_day_walls(
    p_calendar tickq.calendar
) RETURNS time[]
LANGUAGE sql IMMUTABLE
AS $$
    -- The wall times of tickq.calendar_day_slots: the times, and each hour with each minute.
    SELECT ARRAY[least(t.low, make_time(h.low, m.low, 0)), greatest(t.high, make_time(h.high, m.high, 0))]
    FROM (SELECT min(x) AS low, max(x) AS high FROM unnest(p_calendar.times) AS x) AS t
    CROSS JOIN (SELECT min(x) AS low, max(x) AS high FROM unnest(p_calendar.hours) AS x) AS h
    CROSS JOIN (SELECT min(x) AS low, max(x) AS high FROM unnest(p_calendar.minutes) AS x) AS m
$$;
COMMENT ON FUNCTION tickq.simulation_day_walls(tickq.calendar) IS
'A calendar''s first and last wall time of a day (of its times, and of its hours with its minutes): '
'where its zone keeps one offset, the first and last slot of any day it takes.';

CREATE OR REPLACE FUNCTION tickq.simulation_repeats_until(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_zones text[],
    p_firsts timestamptz[],
    p_lasts timestamptz[],
    p_backs timestamptz[],
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_horizon timestamptz := p_until;
    v_days boolean := extract(EPOCH FROM p_shift) % 86400 = 0;
    v_steady text[] := '{}'::text[];
    v_paused boolean;
    v_zones text[];
    v_uneven boolean;
BEGIN
    -- One pass over the kinds (each pass cost about a third of a call, a thousand kinds): a
    -- pause past p_from, the calendars' zones, and whether p_shift is not a whole number of
    -- some cadence.
    SELECT coalesce(bool_or(k.paused_until > p_from), false),
        coalesce(array_agg(DISTINCT k.timezone) FILTER (WHERE k.every IS NULL), '{}'),
        coalesce(bool_or(k.every IS NOT NULL AND NOT extract(EPOCH FROM p_shift) % extract(EPOCH FROM k.every) = 0), false)
    INTO v_paused, v_zones, v_uneven
    FROM tickq.job_kind AS k
    WHERE k.enabled;
    IF v_paused THEN
        RETURN NULL;
    END IF;
    IF v_days THEN  -- the zones that keep their offset around both stretches
        v_steady := ARRAY(SELECT z.zone FROM unnest(v_zones) AS z (zone)  -- each zone once, not each kind
            WHERE tickq.zone_steady(z.zone, p_from - interval '1 day', p_until + p_shift + interval '1 day'));
        -- The breaks of the kinds with day rules in those zones (p_zones ... p_backs: rows of
        -- tickq.simulation_breaks for this shift, from before p_from to past p_until).
        v_horizon := least(v_horizon, (
            SELECT min(CASE WHEN b.back_to >= p_from THEN b.back_to ELSE greatest(b.first_at, p_from) END)
            FROM unnest(p_zones, p_firsts, p_lasts, p_backs) AS b (zone, first_at, last_at, back_to)
            WHERE b.last_at >= p_from AND b.zone = ANY(v_steady)));
    END IF;
    -- The rest, walked (the answer is the least of the kinds', so the kinds most likely to
    -- differ go first, and once it is p_from the walk ends): a cadence p_shift does not divide,
    -- then calendars with day rules, then those of a zone with clock changes, fewest times
    -- first. Left out: cadences p_shift divides, and calendars in steady zones for whole days
    -- (none left: no walk).
    IF NOT v_uneven AND v_zones <@ v_steady THEN
        RETURN v_horizon;
    END IF;
    FOR v_kind IN
        SELECT jk.* FROM tickq.job_kind AS jk
        WHERE jk.enabled
            AND NOT (jk.every IS NOT NULL AND extract(EPOCH FROM p_shift) % extract(EPOCH FROM jk.every) = 0)
            AND NOT (v_days AND jk.every IS NULL AND jk.timezone = ANY(v_steady))
        ORDER BY jk.every IS NULL, NOT tickq.simulation_day_rules(jk), jk.timezone = 'UTC',
            cardinality(jk.at_times), jk.name
    LOOP
        EXIT WHEN v_horizon <= p_from;
        v_horizon := tickq.simulation_walk_until(v_kind, p_from, v_horizon, p_shift);
    END LOOP;
    RETURN v_horizon;
END
$$;
COMMENT ON FUNCTION tickq.simulation_repeats_until(
    timestamptz, timestamptz, interval, text[], timestamptz[], timestamptz[], timestamptz[], timestamptz
) IS
'For the simulator: the latest instant C, at most p_until, such that the stretch from p_from until C '
'comes again p_shift later for every enabled kind (the same slots, and the first one at or after C, '
'p_shift later; or no slot in either stretch); p_from or earlier when none; NULL when a kind is '
'paused past p_from. p_zones .. p_backs are tickq.simulation_breaks'' rows for p_shift over the '
'stretch (read once per window).';

CREATE OR REPLACE FUNCTION tickq.simulation_repeats_until(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT tickq.simulation_repeats_until(p_from, p_until, p_shift, coalesce(array_agg(b.zone), '{}'),
        coalesce(array_agg(b.first_at), '{}'),
        coalesce(array_agg(b.last_at), '{}'), coalesce(array_agg(b.back_to), '{}'))
    FROM tickq.simulation_breaks(p_from, p_until, p_shift) AS b
    WHERE extract(EPOCH FROM p_shift) % 86400 = 0
$$;
COMMENT ON FUNCTION tickq.simulation_repeats_until(timestamptz, timestamptz, interval, timestamptz) IS
'tickq.simulation_repeats_until with the breaks of the kinds'' day rules read for this stretch alone.';

-- A window that repeats one simulated before it in the same database (check's month ends, a
-- quarter of a year apart, come again slot for slot): not simulated again, its report is the
-- earlier one's with every wait begun that much later.

CREATE OR REPLACE FUNCTION tickq.simulation_window_repeats(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- From the steady start (tickq.simulation_start) every kind waits for its next slot with
    -- nothing running, so a window p_shift later starts in the state the one from p_from started
    -- in, and goes on the same way where every kind's slots from p_from through p_until, and its
    -- first one after, come again p_shift later (tickq.simulation_repeats_until, NULL where a kind
    -- is paused). Not with an enabled irreversible kind armed at p_from or later, or not at all:
    -- the window that arms it has a manual run at its start (tickq.simulation_arm) that a later
    -- one has not (a scratch database whose first window is a later one is armed at the first
    -- window's start, before any of its own: check's month ends).
    SELECT p_shift > interval '0'
        AND NOT EXISTS (SELECT FROM tickq.job_kind AS k
            WHERE k.enabled AND k.irreversible AND NOT coalesce(k.armed_at < p_from, false))
        AND coalesce(tickq.simulation_repeats_until(p_from, p_until, p_shift, p_now) >= p_until, false)
$$;
COMMENT ON FUNCTION tickq.simulation_window_repeats(timestamptz, timestamptz, interval, timestamptz) IS
'For check: true when a window simulated from the steady start p_shift after the one from p_from '
'through p_until makes that one''s runs p_shift later (every kind''s slots come again p_shift later, '
'tickq.simulation_repeats_until; no kind paused, every irreversible one armed before p_from), so its '
'report is that one''s shifted (tickq.simulation_merge_repeat).';

CREATE OR REPLACE FUNCTION tickq.simulation_merge_repeat(
    p_worst jsonb,
    p_window integer,
    p_report jsonb,
    p_shift interval
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- Window p_window repeats an earlier window p_shift later (tickq.simulation_window_repeats):
    -- that one's report (p_report: tickq.simulation_merge of it alone) with every wait begun
    -- p_shift later, folded into p_worst as tickq.simulation_merge folds a window's report. Only
    -- the two fields that differ are written: the rest of a report's shape is simulation_merge's.
    SELECT tickq.simulation_fold(p_worst, (
        SELECT jsonb_agg(e.w || jsonb_build_object(
            'worst_due_at', (e.w ->> 'worst_due_at')::timestamptz + p_shift, 'in_window', p_window))
        FROM jsonb_array_elements(p_report) AS e (w)
    ))
$$;
COMMENT ON FUNCTION tickq.simulation_merge_repeat(jsonb, integer, jsonb, interval) IS
'Folds into p_worst (as tickq.simulation_merge does) the report of window p_window where it repeats '
'an earlier window p_shift later (tickq.simulation_window_repeats): that window''s report p_report '
'(tickq.simulation_merge of it alone) with every wait begun p_shift later.';
