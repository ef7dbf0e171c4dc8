-- The month ends `tickq check` simulates beside its other windows (tickq.simulation_windows): a
-- month end of a 28-, 29-, 30- and 31-day month, so that kinds on the last days of the month,
-- the first, nth weekdays or cron strings that meet only in a month of some length (days = [-1]
-- with days = [28] in February, [-1] with [30] in April) are simulated together.

CREATE OR REPLACE FUNCTION tickq.month_end_windows(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (starts_at timestamptz, period interval, month_end date)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
BEGIN
    -- PL/pgSQL, so that it may name the simulator's functions of a later file (18_repeats.sql).
    -- Only when some calendar kind names days of the month, months, nth weekdays or a cron
    -- string: a plain daily or weekly time does not know the month. Each window holds the
    -- day before the month's last day, the last day and the next month's first day, in every
    -- zone of the calendar kinds (local midnight to local midnight, the zones' spread added).
    RETURN QUERY
    WITH zones AS (
        SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k
        WHERE k.enabled AND (k.at_times IS NOT NULL OR k.cron IS NOT NULL)
            AND EXISTS (SELECT FROM tickq.job_kind AS m WHERE m.enabled AND (m.cron IS NOT NULL
                OR m.days IS NOT NULL OR m.months IS NOT NULL OR NOT m.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]))
    ),
    -- The month ends of the next four years (a 29th of February among them).
    ends AS (
        SELECT (date_trunc('month', p_now AT TIME ZONE 'UTC') + make_interval(months => g.n + 1)
            - interval '1 day')::date AS last_day
        FROM generate_series(0, 48) AS g (n)
    ),
    spans AS (
        SELECT e.last_day, extract(DAY FROM e.last_day)::integer AS days,
            min((e.last_day - 1)::timestamp AT TIME ZONE z.zone) AS from_at,
            max((e.last_day + 2)::timestamp AT TIME ZONE z.zone) AS until_at
        FROM ends AS e CROSS JOIN zones AS z
        GROUP BY e.last_day
    ),
    -- Of each length, the month ends of the next year and the first one however far (a 29th
    -- of February), scored by the slots of the kinds whose slots differ between months of one
    -- length (months, weekdays, cron); the earliest of the most.
    ahead AS (
        SELECT s.*, row_number() OVER (PARTITION BY s.days ORDER BY s.last_day) AS n
        FROM spans AS s WHERE s.from_at > p_now
    ),
    candidates AS (
        SELECT a.* FROM ahead AS a WHERE a.n = 1 OR a.last_day < (p_now AT TIME ZONE 'UTC')::date + 366
    ),
    -- A kind with the same slots every day (no day rules: tickq.simulation_day_rules) in a zone
    -- that keeps one offset over all candidates has as many slots in each of them when they all
    -- start at one time of day and last as long: it adds the same to every score, and is not
    -- counted (1,000 cron kinds: 12,000 counts of three days each, most of them these).
    same AS (
        SELECT count(DISTINCT ((c.from_at AT TIME ZONE 'UTC')::time, c.until_at - c.from_at)) = 1 AS spans,
            min(c.from_at) AS from_at, max(c.until_at) AS until_at
        FROM candidates AS c
    ),
    steady AS (
        SELECT z.zone FROM (SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k WHERE k.enabled) AS z
        CROSS JOIN same AS m
        WHERE m.spans AND tickq.zone_steady(z.zone, m.from_at, m.until_at)
    ),
    scored AS (
        -- counted day by day (tickq.slots_between), not slot by slot: a cron string every minute
        SELECT c.*, (SELECT coalesce(sum(tickq.slots_between(tickq.schedule_of(k), c.from_at, c.until_at)), 0)
            FROM tickq.job_kind AS k
            WHERE k.enabled AND (k.cron IS NOT NULL OR k.months IS NOT NULL OR k.on_days IS NOT NULL)
                AND (tickq.simulation_day_rules(k) OR k.timezone NOT IN (SELECT st.zone FROM steady AS st))) AS slots
        FROM candidates AS c
    )
    SELECT DISTINCT ON (s.days) s.from_at, s.until_at - s.from_at, s.last_day
    FROM scored AS s
    ORDER BY s.days, s.slots DESC, s.last_day;
END
$$;
COMMENT ON FUNCTION tickq.month_end_windows(timestamptz) IS
'The month ends tickq.simulation_windows adds when a calendar kind names days of the month, '
'months, nth weekdays or a cron string: for each month length (28, 29, 30, 31 days) the month '
'end ahead (within a year, or the first of that length however far: a 29th of February) whose '
'days hold the most slots of the kinds that differ between months of one length, the earliest '
'of them; each window from local midnight of the day before the last day to the end of the '
'next month''s first day, over the calendar kinds'' zones.';

CREATE OR REPLACE FUNCTION tickq.period_ticks(
    p_kind tickq.job_kind,
    p_durations jsonb,
    p_tick interval,
    p_period interval,
    p_now timestamptz DEFAULT now()
) RETURNS integer[]
LANGUAGE sql STABLE
AS $$
    -- A calendar kind (at or cron) holds ticks from each of its slots in the period, once a
    -- period; a cadence from its first slot after p_now, every greatest(every, tick).
    SELECT coalesce(array_agg(x.cell ORDER BY x.cell), '{}')
    FROM (
        SELECT tickq.held_ticks(c.slot, p_period, tickq.ticks_held(p_kind, p_durations, p_tick), p_period, p_tick,
            p_now) AS cells
        FROM tickq.calendar_slots_in(tickq.schedule_of(p_kind), p_now + p_period, p_now) AS c (slot)
        WHERE p_kind.every IS NULL
        UNION ALL
        SELECT tickq.held_ticks(tickq.next_slot(tickq.schedule_of(p_kind), p_now - interval '1 microsecond'),
            greatest(p_kind.every, p_tick), tickq.ticks_held(p_kind, p_durations, p_tick), p_period, p_tick, p_now)
        WHERE p_kind.every IS NOT NULL
    ) AS h
    CROSS JOIN LATERAL unnest(h.cells) AS x (cell)
$$;
COMMENT ON FUNCTION tickq.period_ticks(tickq.job_kind, jsonb, interval, interval, timestamptz) IS
'The ticks (numbered from p_now, the start of the period as tickq.held_ticks takes it, 0 first; a '
'tick twice when two runs hold it) that the runs of p_kind at its own schedule hold over the '
'period, each as long as tickq.ticks_held '
'says: the load that spread_offsets and spread_times count for the kinds they do not move.';

CREATE OR REPLACE FUNCTION tickq.period_load(
    p_kinds tickq.job_kind[],
    p_durations jsonb,
    p_tick interval,
    p_period interval,
    p_ticks integer,
    p_now timestamptz DEFAULT now()
) RETURNS integer[]
LANGUAGE sql STABLE
AS $$
    -- Element t + 1: the slots the runs of p_kinds holding tick t take (their weights), 0 where
    -- none does.
    SELECT coalesce(array_agg(coalesce(l.load, 0)::integer ORDER BY t.n), '{}')
    FROM generate_series(0, p_ticks - 1) AS t (n)
    LEFT JOIN (
        SELECT x.cell, sum(k.weight) AS load
        FROM unnest(p_kinds) AS k
        CROSS JOIN LATERAL unnest(tickq.period_ticks(k, p_durations, p_tick, p_period, p_now)) AS x (cell)
        GROUP BY x.cell
    ) AS l ON t.n = l.cell
$$;
COMMENT ON FUNCTION tickq.period_load(tickq.job_kind[], jsonb, interval, interval, integer, timestamptz) IS
'The load of kinds that stay where they are, per tick of the period from p_now (p_ticks ticks, 0 '
'first): the weights of the runs of p_kinds holding each tick (tickq.period_ticks), what '
'tickq.spread_offsets and tickq.spread_times place the kinds they move against.';

CREATE OR REPLACE FUNCTION tickq.spread_times(
    p_durations jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, at_times text[])
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_tick interval;
    v_start timestamptz;
    v_period interval;
    v_ticks integer;
    v_load integer[];
    v_kind record;
    v_best integer;
    v_cell integer;
BEGIN
    -- As tickq.spread_offsets does for cadences, over the same period (the first whole-period
    -- window of tickq.simulation_windows): the load of every kind's runs in whole ticks, then
    -- each calendar kind with "at" times in turn (longest holder first) moved later by the whole
    -- ticks (whole minutes, within its day) whose ticks are least loaded: its own times when
    -- they are as good. A month-end pile-up (many kinds on days = [-1] at 00:00) is spread so.
    -- Without such a kind nothing moves, and the load is not counted (a moved crontab has none:
    -- its month at a one-minute tick took seconds).
    IF NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.enabled AND k.at_times IS NOT NULL AND k.name NOT LIKE 'agent.%') THEN
        RETURN;
    END IF;
    SELECT w.tick, w.starts_at + w.warm_up, w.period, w.ticks INTO STRICT v_tick, v_start, v_period, v_ticks
    FROM tickq.simulation_first_window(p_now) AS w;
    -- What stays: cadences at their own offsets, cron strings, the housekeeping kind. A run
    -- loads its ticks by its weight (the slot rows it holds), as in tickq.spread_offsets.
    v_load := tickq.period_load(ARRAY(SELECT k FROM tickq.job_kind AS k
        WHERE k.enabled AND (k.cron IS NOT NULL OR k.every IS NOT NULL)),
        p_durations, v_tick, v_period, v_ticks, v_start);
    FOR v_kind IN
        SELECT k.name, k.at_times, k.weight, tickq.ticks_held(k, p_durations, v_tick) AS ticks,
            tickq.period_ticks(k, p_durations, v_tick, v_period, v_start) AS cells,
            -- later by at most what keeps the last time within its day, in whole minutes
            floor(extract(EPOCH FROM '23:59'::time - (SELECT max(t) FROM unnest(k.at_times) AS t))
                / extract(EPOCH FROM v_tick))::integer AS most
        FROM tickq.job_kind AS k
        -- an agent's times are its owner's, not the registry's to print
        WHERE k.enabled AND k.at_times IS NOT NULL AND k.name NOT LIKE 'agent.%'
        ORDER BY 4 DESC, k.priority, k.name
    LOOP
        SELECT s.n INTO STRICT v_best
        FROM generate_series(0, greatest(v_kind.most, 0)) AS s (n)
        WHERE (s.n * extract(EPOCH FROM v_tick))::numeric % 60 = 0
        ORDER BY (SELECT max(v_load[(x + s.n) % v_ticks + 1]) FROM unnest(v_kind.cells) AS x),
            (SELECT sum(v_load[(x + s.n) % v_ticks + 1]) FROM unnest(v_kind.cells) AS x), s.n
        LIMIT 1;
        FOREACH v_cell IN ARRAY v_kind.cells LOOP
            v_load[(v_cell + v_best) % v_ticks + 1] := v_load[(v_cell + v_best) % v_ticks + 1] + v_kind.weight;
        END LOOP;
        IF v_best > 0 THEN
            kind := v_kind.name;
            at_times := ARRAY(SELECT to_char(t + v_best * v_tick, 'HH24:MI') FROM unnest(v_kind.at_times) AS t
                ORDER BY t);
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.spread_times(jsonb, timestamptz) IS
'The "at" times tickq check --suggest proposes for the queue''s calendar kinds (not cron strings): '
'over the first whole-period window of tickq.simulation_windows, each kind in turn, longest holder '
'first, its times moved later by the whole ticks (whole minutes, within the day) whose ticks the '
'runs already placed load least, its own times when they are as good. Returns only the kinds whose '
'times change ("HH:MM"). Each run holds its weight in slots for p_durations->kind seconds, else '
'its timeout.';

CREATE OR REPLACE FUNCTION tickq.month_end_at(
    p_zone text,
    p_at timestamptz DEFAULT now()
) RETURNS date
LANGUAGE sql STABLE
AS $$
    -- On the month's last day or the next month's first, in the zone: that month's last day.
    SELECT CASE
        WHEN extract(DAY FROM t.local_at + interval '1 day') = 1 THEN t.local_at::date
        WHEN extract(DAY FROM t.local_at) = 1 THEN (t.local_at - interval '1 day')::date
    END
    FROM (SELECT p_at AT TIME ZONE p_zone AS local_at) AS t
$$;
COMMENT ON FUNCTION tickq.month_end_at(text, timestamptz) IS
'The last day of the month whose end p_at (default now) is at: p_at on a month''s last day or '
'on the next month''s first day in zone p_zone; NULL on any other day. tickq check names the month end a '
'starved kind''s worst wait began at with it (in the kind''s zone).';
