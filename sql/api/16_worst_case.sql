-- The worst case `tickq check` judges: which windows it simulates (simulation_windows), the window
-- `tickq simulate` replays (simulation_replay_window), each kind's worst wait over all windows
-- (simulation_merge, simulation_fold, simulation_worst), and the offsets `check --suggest` proposes
-- (spread_offsets). The simulator itself is sql/api/07_simulate.sql; a caller runs it in a
-- scratch database of its own, window by window, part by part (tickq.simulation_parts).

CREATE OR REPLACE FUNCTION tickq.simulation_windows(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    starts_at timestamptz, hours numeric, period interval, warm_up interval, dst_zone text, month_end date
)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_stale interval;
    v_period interval := '0'::interval;
    v_lcm bigint := 1;
    v_seconds bigint;
    v_warm interval;
    v_tick interval;
    v_zone record;
    v_end record;
    v_starts timestamptz[] := '{}'::timestamptz[];
    v_periods interval[] := '{}'::interval[];
    v_zones text[] := '{}'::text[];
    v_ends date[] := '{}'::date[];
BEGIN
    SELECT s.stale_after, s.tick INTO STRICT v_stale, v_tick FROM tickq.settings AS s;
    -- The period that covers every schedule once: the longest cadence, a day for daily calendar
    -- times, a week for weekdays, and the cadences' least common multiple (when cadences of 7 and
    -- 11 minutes meet only every 77), at most a week; all of it at most 31 days.
    FOR v_seconds IN
        SELECT DISTINCT extract(EPOCH FROM k.every)::bigint FROM tickq.job_kind AS k
        WHERE k.enabled AND k.every IS NOT NULL
    LOOP
        v_lcm := least(v_lcm / gcd(v_lcm, v_seconds) * v_seconds, 7 * 86400);
    END LOOP;
    SELECT greatest(
        make_interval(secs => v_lcm),
        max(k.every),
        max(CASE WHEN k.cron IS NOT NULL OR k.days IS NOT NULL OR k.months IS NOT NULL
                OR NOT k.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[] THEN interval '31 days'
            WHEN k.at_times IS NULL THEN NULL WHEN k.on_days IS NULL THEN interval '1 day'
            ELSE interval '7 days' END))
    INTO v_period
    FROM tickq.job_kind AS k
    WHERE k.enabled;
    v_period := least(coalesce(v_period, '1 hour'::interval), '31 days'::interval);
    -- A run due at the very end still has stale_after to show that it waited too long; the
    -- window opens the longest timeout early, so runs that started before it hold their slots
    -- when it begins, as they would in a queue that has been running. Whole ticks, so the
    -- simulated ticks fall on the period's aligned instants (as cron's */N does).
    SELECT v_tick * ceil(extract(EPOCH FROM coalesce(max(k.timeout), '0'::interval)) / extract(EPOCH FROM v_tick))
    INTO v_warm FROM tickq.job_kind AS k WHERE k.enabled;

    -- Calendar times in a zone with daylight saving: windows hold each clock-change day of each
    -- such zone (its next two changes after p_now in the database's own time-zone data, spring
    -- and fall), starting at that day's local midnight: the next change a whole period, the one
    -- after it that day and the next. A change in a window already planned shares it.
    FOR v_zone IN
        SELECT z.zone, c.changes_at, c.n
        FROM (SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k
            WHERE k.enabled AND (k.at_times IS NOT NULL OR k.cron IS NOT NULL)) AS z
        CROSS JOIN LATERAL (
            SELECT h.at AS changes_at, row_number() OVER (ORDER BY h.at) AS n
            FROM generate_series(date_trunc('hour', p_now), date_trunc('hour', p_now) + interval '400 days',
                interval '1 hour') AS h (at)
            WHERE (h.at AT TIME ZONE z.zone) - (h.at AT TIME ZONE 'UTC')
                <> ((h.at + interval '1 hour') AT TIME ZONE z.zone) - ((h.at + interval '1 hour') AT TIME ZONE 'UTC')
            ORDER BY h.at LIMIT 2
        ) AS c
        ORDER BY c.n, c.changes_at, z.zone
    LOOP
        CONTINUE WHEN EXISTS (SELECT FROM unnest(v_starts, v_periods) AS w (at, period)
            WHERE v_zone.changes_at >= w.at AND v_zone.changes_at + interval '1 hour' <= w.at + w.period);
        v_starts := v_starts || ((((v_zone.changes_at + interval '1 hour') AT TIME ZONE v_zone.zone)::date)::timestamp
            AT TIME ZONE v_zone.zone);
        v_periods := v_periods || CASE WHEN v_zone.n = 1 THEN v_period ELSE least(v_period, interval '2 days') END;
        v_zones := v_zones || v_zone.zone::text;
        v_ends := v_ends || NULL::date;
    END LOOP;
    IF cardinality(v_starts) = 0 THEN
        -- No change day to hold: from midnight UTC, where every clock-aligned cadence meets.
        v_starts := ARRAY[date_trunc('day', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'];
        v_periods := ARRAY[v_period];
        v_zones := ARRAY[NULL::text];
        v_ends := ARRAY[NULL::date];
    END IF;
    -- A month end of each length (sql/api/17_month_ends.sql), unless a planned window holds it.
    FOR v_end IN SELECT * FROM tickq.month_end_windows(p_now) AS e ORDER BY e.starts_at LOOP
        CONTINUE WHEN EXISTS (SELECT FROM unnest(v_starts, v_periods) AS w (at, period)
            WHERE v_end.starts_at >= w.at AND v_end.starts_at + v_end.period <= w.at + w.period);
        v_starts := v_starts || v_end.starts_at;
        v_periods := v_periods || v_end.period;
        v_zones := v_zones || NULL::text;
        v_ends := v_ends || v_end.month_end;
    END LOOP;
    RETURN QUERY
    SELECT w.at - v_warm, round(extract(EPOCH FROM v_warm + w.period + v_stale) / 3600, 6), w.period, v_warm,
        w.zone, w.month_end
    FROM unnest(v_starts, v_periods, v_zones, v_ends) AS w (at, period, zone, month_end)
    ORDER BY w.at;
END
$$;
COMMENT ON FUNCTION tickq.simulation_windows(timestamptz) IS
'The windows tickq check simulates: each covers every enabled schedule at least once (period: the '
'longest cadence or calendar period, the cadences'' least common multiple up to a week, at most '
'31 days), opened the longest timeout early and closed stale_after late; with calendar kinds in '
'zones that change clocks, one window per '
'change day (the next after p_now), whose period starts at its local midnight, shared by zones '
'it covers, and a shorter one (two days at most) for the change after it; with kinds on days of '
'the month, months, nth weekdays or cron strings, a month end of each length '
'(tickq.month_end_windows, month_end) that no other window holds.';

CREATE OR REPLACE FUNCTION tickq.simulation_first_window(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    starts_at timestamptz, hours numeric, period interval, warm_up interval, tick interval, ticks integer
)
LANGUAGE sql STABLE
AS $$
    -- The longest period first (a whole period of every schedule), the earliest of those.
    SELECT w.starts_at, w.hours, w.period, w.warm_up, s.tick,
        greatest(1, ceil(extract(EPOCH FROM w.period) / extract(EPOCH FROM s.tick)))::integer
    FROM tickq.simulation_windows(p_now) AS w
    CROSS JOIN tickq.settings AS s
    ORDER BY w.period DESC, w.starts_at
    LIMIT 1
$$;
COMMENT ON FUNCTION tickq.simulation_first_window(timestamptz) IS
'The first planned window of tickq.simulation_windows (the longest period, then the earliest), '
'with the tick and the whole ticks (at least one) in its period: the window tickq simulate replays '
'by default and the period tickq.spread_offsets and spread_times load.';

CREATE OR REPLACE FUNCTION tickq.simulation_replay_window(
    p_hours numeric DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    starts_at timestamptz, hours numeric, period interval, warm_up interval, dst_zone text, month_end date
)
LANGUAGE sql STABLE
AS $$
    -- A registry deployed now: nothing ran before it, so there is no warm-up. By default the
    -- first planned window's period and stale_after.
    SELECT p_now, coalesce(p_hours, round(w.hours - extract(EPOCH FROM w.warm_up) / 3600, 6)), w.period,
        '0'::interval, NULL::text, NULL::date
    FROM tickq.simulation_first_window(p_now) AS w
$$;
COMMENT ON FUNCTION tickq.simulation_replay_window(numeric, timestamptz) IS
'The window tickq simulate replays: from p_now, p_hours long (default: every schedule once and '
'stale_after, as the first whole-period window of tickq.simulation_windows without its warm-up).';

CREATE OR REPLACE FUNCTION tickq.simulation_worst(
    p_worst jsonb
) RETURNS TABLE (
    kind text,
    lane text,
    runs integer,
    longest_wait interval,
    starved boolean,
    worst_due_at timestamptz,
    behind text[],
    in_window integer
)
LANGUAGE sql STABLE
AS $$
    SELECT w.kind, w.lane, w.runs, w.longest_wait, w.starved, w.worst_due_at, w.behind, w.in_window
    FROM jsonb_to_recordset(coalesce(p_worst, '[]'::jsonb)) AS w (
        kind text, lane text, runs integer, longest_wait interval, starved boolean,
        worst_due_at timestamptz, behind text[], in_window integer
    )
    ORDER BY array_position(enum_range(NULL::tickq.priority), w.lane::tickq.priority), w.kind
$$;
COMMENT ON FUNCTION tickq.simulation_worst(jsonb) IS
'Reads what tickq.simulation_merge gathered: per kind its runs over all windows, its longest wait '
'(NULL: never due), starved, when that wait began, what it waited behind, and in which window '
'(1 = the first merged). By lane, then name.';

CREATE OR REPLACE FUNCTION tickq.simulation_fold(
    p_worst jsonb,
    p_more jsonb
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- Per kind, the side where it waited longest decides the wait, when it began, what it
    -- waited behind and the window (on a tie p_worst, the earlier windows; never due counts as
    -- shorter than any wait); its runs are those of both sides, and it starved if either did.
    WITH seen AS (SELECT * FROM tickq.simulation_worst(p_worst)),
    more AS (SELECT * FROM tickq.simulation_worst(p_more)),
    paired AS (
        SELECT s, t, s.kind IS NULL OR (t.kind IS NOT NULL
            AND coalesce(t.longest_wait, interval '-1 day') > coalesce(s.longest_wait, interval '-1 day'))
            AS this_is_worse
        FROM seen AS s
        FULL JOIN more AS t ON s.kind = t.kind
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object(
        'kind', coalesce((p.s).kind, (p.t).kind),
        'lane', coalesce((p.s).lane, (p.t).lane),
        'runs', coalesce((p.s).runs, 0) + coalesce((p.t).runs, 0),
        'longest_wait', CASE WHEN p.this_is_worse THEN (p.t).longest_wait ELSE (p.s).longest_wait END,
        'starved', coalesce((p.s).starved, false) OR coalesce((p.t).starved, false),
        'worst_due_at', CASE WHEN p.this_is_worse THEN (p.t).worst_due_at ELSE (p.s).worst_due_at END,
        'behind', CASE WHEN p.this_is_worse THEN (p.t).behind ELSE (p.s).behind END,
        'in_window', CASE WHEN p.this_is_worse THEN (p.t).in_window ELSE (p.s).in_window END
    )), '[]'::jsonb)
    FROM paired AS p
$$;
COMMENT ON FUNCTION tickq.simulation_fold(jsonb, jsonb) IS
'Folds p_more, what later windows gave (as tickq.simulation_merge returns it), into p_worst, what '
'earlier windows gave (NULL: none): per kind the longest wait of either side (a tie: p_worst''s), '
'with the runs of both and starved if either starved it. Windows simulated apart (each in a scratch '
'database of its own) folded in their order give what merging them one after the other in one '
'database gives.';

CREATE OR REPLACE FUNCTION tickq.simulation_merge(
    p_worst jsonb,
    p_window integer,
    p_until timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- This window's report, in simulation_worst's shape, folded into the earlier windows'.
    SELECT tickq.simulation_fold(p_worst, (
        SELECT jsonb_agg(jsonb_build_object(
            'kind', r.kind, 'lane', r.priority::text, 'runs', r.runs, 'longest_wait', r.longest_wait,
            'starved', r.starved, 'worst_due_at', r.worst_due_at, 'behind', r.behind, 'in_window', p_window))
        FROM tickq.simulation_report(p_until, p_now) AS r
    ))
$$;
COMMENT ON FUNCTION tickq.simulation_merge(jsonb, integer, timestamptz, timestamptz) IS
'Folds the simulator''s report of window p_window (tickq.simulation_report(p_until, p_now)) into '
'p_worst, what earlier windows gave (NULL before the first), by tickq.simulation_fold: per kind the '
'longest wait of any window, with the runs of all and starved if any starved it. Read it with '
'tickq.simulation_worst.';

CREATE OR REPLACE FUNCTION tickq.calendar_slots_in(
    p_schedule tickq.schedule,
    p_until timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS SETOF timestamptz
LANGUAGE sql STABLE
AS $$
    -- Walked with next_slot, which owns the calendar and its daylight-saving rules.
    WITH RECURSIVE walk (slot) AS (
        SELECT tickq.next_slot(p_schedule, p_now - interval '1 microsecond')
        UNION ALL
        SELECT tickq.next_slot(p_schedule, w.slot)
        FROM walk AS w
        WHERE w.slot < p_until
    )
    SELECT w.slot FROM walk AS w WHERE w.slot < p_until
$$;
COMMENT ON FUNCTION tickq.calendar_slots_in(tickq.schedule, timestamptz, timestamptz) IS
'Every slot of a calendar schedule (at times with their day filters, or a cron string) from p_now '
'(included) until p_until (excluded).';

CREATE OR REPLACE FUNCTION tickq.held_ticks(
    p_first timestamptz,
    p_step interval,
    p_ticks integer,
    p_period interval,
    p_tick interval,
    p_now timestamptz DEFAULT now()
) RETURNS integer[]
LANGUAGE sql IMMUTABLE
AS $$
    -- The ticks of the period from p_now are numbered 0, 1, ...; a run due at a slot is claimed at
    -- the first tick at or after it and holds p_ticks ticks, wrapping around the period's end as
    -- the same schedule would in the next period. A tick held twice is listed twice.
    SELECT coalesce(array_agg(
        (ceil(extract(EPOCH FROM s.at - p_now) / extract(EPOCH FROM p_tick))::integer + i) % b.ticks
        ORDER BY s.at, i), '{}')
    FROM (SELECT greatest(1, ceil(extract(EPOCH FROM p_period) / extract(EPOCH FROM p_tick)))::integer AS ticks)
        AS b
    CROSS JOIN generate_series(p_first, p_now + p_period - interval '1 microsecond', p_step) AS s (at)
    CROSS JOIN generate_series(0, p_ticks - 1) AS i
$$;
COMMENT ON FUNCTION tickq.held_ticks(timestamptz, interval, integer, interval, interval, timestamptz) IS
'Internal to spread_offsets: the ticks of a period (numbered from p_now, 0 first) held by runs '
'due at p_first, p_first + p_step, ... before the period ends, each p_ticks ticks long.';

CREATE OR REPLACE FUNCTION tickq.ticks_held(
    p_kind tickq.job_kind,
    p_durations jsonb,
    p_tick interval
) RETURNS integer
LANGUAGE sql IMMUTABLE
AS $$
    SELECT greatest(1,
        ceil(extract(EPOCH FROM tickq.simulated_hold(p_kind, p_durations)) / extract(EPOCH FROM p_tick)))::integer
$$;
COMMENT ON FUNCTION tickq.ticks_held(tickq.job_kind, jsonb, interval) IS
'Internal to spread_offsets: how many whole ticks a run of the kind holds its slot (at least one), '
'as tickq.simulated_hold counts it.';

CREATE OR REPLACE FUNCTION tickq.spread_offsets(
    p_durations jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, offset_seconds integer)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_tick interval;
    v_start timestamptz;
    v_period interval;
    v_ticks integer;
    v_load integer[];
    v_cells integer[];
    v_kind record;
    v_best integer;
    v_cell integer;
BEGIN
    -- Over the period of the first planned window, each kind's runs hold whole ticks
    -- (tickq.held_ticks); v_load[t + 1] counts the slots the runs holding tick t take (their
    -- weights: tickq.period_load). Without a movable kind (below) nothing moves, and the load is not counted.
    SELECT w.tick, w.starts_at + w.warm_up, w.period, w.ticks INTO STRICT v_tick, v_start, v_period, v_ticks
    FROM tickq.simulation_first_window(p_now) AS w;
    IF NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.enabled AND k.every > v_tick AND k.name <> 'tickq.housekeeping') THEN
        RETURN;
    END IF;
    -- What no offset moves: calendar slots, the housekeeping kind, cadences at or below the tick
    -- (claimed at every tick, whatever their offset).
    v_load := tickq.period_load(ARRAY(SELECT k FROM tickq.job_kind AS k
        WHERE k.enabled AND (k.every IS NULL OR k.every <= v_tick OR k.name = 'tickq.housekeeping')),
        p_durations, v_tick, v_period, v_ticks, v_start);
    -- The movable kinds, longest holders first as in bin packing, then by lane and name for a
    -- stable answer; each in turn at the offset (whole ticks) whose ticks are least loaded (the
    -- fullest tick, then the sum), its own offset when that is as good.
    FOR v_kind IN
        SELECT k.name, k.every, k.timezone, tickq.ticks_held(k, p_durations, v_tick) AS ticks,
            coalesce(extract(EPOCH FROM k.every_offset), 0)::integer AS own, k.weight
        FROM tickq.job_kind AS k
        WHERE k.enabled AND k.every > v_tick AND k.name <> 'tickq.housekeeping'
        ORDER BY 4 DESC, k.priority, k.name
    LOOP
        SELECT o.seconds, c.cells INTO STRICT v_best, v_cells
        FROM (
            SELECT v_kind.own AS seconds
            UNION ALL
            SELECT g.seconds::integer FROM generate_series(0, extract(EPOCH FROM v_kind.every)::integer - 1,
                extract(EPOCH FROM v_tick)::integer) AS g (seconds)
        ) AS o
        CROSS JOIN LATERAL (
            -- the kind's cadence at the offset tried
            SELECT tickq.held_ticks(tickq.next_slot(ROW(v_kind.every, make_interval(secs => o.seconds), NULL, NULL,
                NULL, NULL, NULL, v_kind.timezone)::tickq.schedule, v_start - interval '1 microsecond'), v_kind.every,
                v_kind.ticks, v_period, v_tick, v_start) AS cells
        ) AS c
        ORDER BY (SELECT max(v_load[x + 1]) FROM unnest(c.cells) AS x),
            (SELECT sum(v_load[x + 1]) FROM unnest(c.cells) AS x),
            o.seconds <> v_kind.own, o.seconds
        LIMIT 1;
        FOREACH v_cell IN ARRAY v_cells LOOP
            v_load[v_cell + 1] := v_load[v_cell + 1] + v_kind.weight;
        END LOOP;
        IF v_best <> v_kind.own THEN
            kind := v_kind.name;
            offset_seconds := v_best;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.spread_offsets(jsonb, timestamptz) IS
'The offsets tickq check --suggest proposes for the queue''s every kinds slower than the tick: '
'over the first planned window''s period (tickq.simulation_windows), each kind in turn, longest '
'holder first, at the offset in whole ticks whose ticks the runs already placed load least (its '
'own offset when that is as good). Returns only the kinds whose offset changes, in seconds. '
'Each run holds its slot for p_durations->kind seconds, else its timeout.';
