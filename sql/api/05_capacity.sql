-- Capacity: how much of the slots each kind's cadence keeps busy. Priority decides order, not
-- whether a kind holds a slot; cadence does. This is the one implementation of that arithmetic:
-- the view, `tickq check` and the simulator all read it.

CREATE OR REPLACE FUNCTION tickq.recent_durations(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (duration interval)
LANGUAGE sql STABLE
-- One query of a set-returning SQL function: inlined into the query that reads it, an index
-- range of job_run_kind_ok per kind.
AS $$
    SELECT r.duration
    FROM tickq.job_run AS r
    WHERE r.kind = p_kind AND r.outcome = 'ok' AND r.finished_at <= p_now
    ORDER BY r.id DESC
    LIMIT 20
$$;
COMMENT ON FUNCTION tickq.recent_durations(text, timestamptz) IS
'The durations of the kind''s last 20 successful runs ended by p_now: what its expected duration '
'(tickq.expected_duration) and the page''s p50 and p95 are taken from.';

CREATE OR REPLACE FUNCTION tickq.expected_duration(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (expected interval, source text)
LANGUAGE sql STABLE
AS $$
    -- The 95th percentile of the last 20 successful runs once there are at least 5 of them,
    -- else the timeout (the worst case the watchdog allows). A session may name what another
    -- queue observed instead (tickq.observed_durations, {"kind": ["<interval>", "<source>"]}):
    -- `tickq check` judges a registry in a scratch database of its own with the user's queue's
    -- history, read from that queue's capacity view.
    WITH recent AS (
        SELECT d.duration FROM tickq.recent_durations(p_kind, p_now) AS d
    ),

    given AS (
        SELECT nullif(current_setting('tickq.observed_durations', true), '')::jsonb -> p_kind AS o
    ),

    found AS (
        SELECT (g.o ->> 0)::interval AS p95, g.o ->> 1 AS source
        FROM given AS g WHERE g.o IS NOT NULL
        UNION ALL
        SELECT
            percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(EPOCH FROM recent.duration))
            * '1 second'::interval,
            'p95 of ' || count(*) || ' runs'
        FROM recent
        WHERE NOT EXISTS (SELECT FROM given AS g WHERE g.o IS NOT NULL)
        HAVING count(*) >= 5
    )

    SELECT coalesce(least(f.p95, k.timeout), k.timeout), coalesce(f.source, 'timeout')
    FROM (SELECT) AS one
    LEFT JOIN found AS f ON true
    LEFT JOIN tickq.job_kind AS k ON k.name = p_kind
$$;
COMMENT ON FUNCTION tickq.expected_duration(text, timestamptz) IS
'How long a run of the kind is expected to hold its slot: the 95th percentile of its last 20 '
'successful runs once there are at least 5 (never above the timeout), else its timeout. The '
'setting tickq.observed_durations (a check''s scratch database) stands in for the history.';

CREATE OR REPLACE FUNCTION tickq.capacity_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    schedule text,
    runs_per_tick numeric,
    expected_duration interval,
    duration_source text,
    slot_share numeric
)
LANGUAGE sql STABLE
AS $$
    SELECT
        k.name,
        k.priority,
        tickq.describe_schedule(tickq.schedule_of(k)),
        round(d.runs_per_tick, 4),
        e.expected,
        e.source,
        -- A kind never runs twice at once, so it never keeps more than one run going; each run
        -- holds its weight in slots.
        round(k.weight * least(1, d.runs_per_tick * extract(EPOCH FROM e.expected) / extract(EPOCH FROM s.tick)), 4)
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    CROSS JOIN LATERAL (
        SELECT CASE WHEN k.every IS NULL
            THEN tickq.slots_between(tickq.schedule_of(k), p_now, p_now + interval '7 days') END AS week
        OFFSET 0  -- counted once per kind, not once per use of week
    ) AS w
    CROSS JOIN LATERAL (
        SELECT CASE
            -- A cadence at or below the tick asks for one run every tick; a slower one for
            -- tick / cadence.
            WHEN k.every IS NOT NULL THEN least(1, extract(EPOCH FROM s.tick) / extract(EPOCH FROM k.every))
            -- A calendar schedule: its slots per week spread over the week's ticks.
            WHEN k.cron IS NULL AND k.days IS NULL AND k.months IS NULL AND k.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]
                IS NOT false
                THEN cardinality(k.at_times) * coalesce(cardinality(k.on_days), 7)
                    * extract(EPOCH FROM s.tick) / extract(EPOCH FROM interval '7 days')
            -- Days of the month, months, nth weekdays, cron: the slots of the coming week, or of
            -- the coming year (52 weeks) for one with fewer than one a day.
            ELSE CASE WHEN w.week >= 7 THEN w.week
                    ELSE tickq.slots_between(tickq.schedule_of(k), p_now, p_now + interval '364 days') / 52.0 END
                * extract(EPOCH FROM s.tick) / extract(EPOCH FROM interval '7 days')
        END AS runs_per_tick
        OFFSET 0  -- once per kind, not once per use of runs_per_tick
    ) AS d
    CROSS JOIN LATERAL tickq.expected_duration(k.name, p_now) AS e
    WHERE k.enabled
    ORDER BY 7 DESC, k.priority, k.name
$$;
COMMENT ON FUNCTION tickq.capacity_at(timestamptz) IS
'One row per enabled kind: runs it asks for per tick, expected duration, and the slots it keeps '
'busy on average (its weight x runs per tick x expected duration / tick, the latter at most 1). '
'Largest share first.';

CREATE OR REPLACE VIEW tickq.capacity AS
SELECT * FROM tickq.capacity_at(now());
COMMENT ON VIEW tickq.capacity IS
'Per enabled kind: runs per tick, expected duration, and share of one slot. The sum of the '
'shares must stay at or below slots * (1 - capacity_margin): see tickq.capacity_total_at.';

CREATE OR REPLACE FUNCTION tickq.capacity_shares(
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
        'priority', c.priority, 'runs_per_tick', c.runs_per_tick, 'slot_share', c.slot_share)), '[]')
    FROM tickq.capacity_at(p_now) AS c
$$;
COMMENT ON FUNCTION tickq.capacity_shares(timestamptz) IS
'The rows of tickq.capacity_at as the lanes are summed from them (tickq.capacity_lanes): a JSON '
'array of {priority, runs_per_tick, slot_share}.';

CREATE OR REPLACE FUNCTION tickq.capacity_lanes(
    p_kinds jsonb
) RETURNS TABLE (
    lane text,
    kinds integer,
    runs_per_tick numeric,
    slot_share numeric,
    slots integer,
    budget numeric,
    fits boolean
)
LANGUAGE sql STABLE
AS $$
    -- p_kinds: capacity_at's rows (tickq.capacity_shares), numbers as JSON numbers or strings:
    -- `tickq check` sends back the rows it read, so they are computed once.
    WITH per_kind AS (
        SELECT (e ->> 'priority')::tickq.priority AS priority, (e ->> 'runs_per_tick')::numeric AS runs_per_tick,
            (e ->> 'slot_share')::numeric AS slot_share
        FROM jsonb_array_elements(coalesce(p_kinds, '[]')) AS e
    ),
    lanes AS (
        SELECT
            p.priority::text AS lane,
            count(*)::integer AS kinds,
            sum(p.runs_per_tick) AS runs_per_tick,
            sum(p.slot_share) AS slot_share,
            array_position(enum_range(NULL::tickq.priority), p.priority) AS ord
        FROM per_kind AS p
        GROUP BY p.priority
        UNION ALL
        SELECT 'total', count(*)::integer, coalesce(sum(p.runs_per_tick), 0), coalesce(sum(p.slot_share), 0), 99
        FROM per_kind AS p
    )
    SELECT
        l.lane,
        l.kinds,
        round(l.runs_per_tick, 4),
        round(l.slot_share, 4),
        s.slots,
        round(s.slots * (1 - s.capacity_margin), 4),
        CASE WHEN l.lane = 'total' THEN l.slot_share <= s.slots * (1 - s.capacity_margin) END
    FROM lanes AS l
    CROSS JOIN tickq.settings AS s
    ORDER BY l.ord
$$;
COMMENT ON FUNCTION tickq.capacity_lanes(jsonb) IS
'The capacity invariant of the kinds'' shares p_kinds (tickq.capacity_shares): slot shares and runs '
'per tick summed per priority lane and in total; fits (on the total row) is whether the total share '
'stays at or below slots * (1 - capacity_margin).';

CREATE OR REPLACE FUNCTION tickq.capacity_total_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    lane text,
    kinds integer,
    runs_per_tick numeric,
    slot_share numeric,
    slots integer,
    budget numeric,
    fits boolean
)
LANGUAGE sql STABLE
AS $$
    SELECT * FROM tickq.capacity_lanes(tickq.capacity_shares(p_now))
$$;
COMMENT ON FUNCTION tickq.capacity_total_at(timestamptz) IS
'The capacity invariant: slot shares and runs per tick summed per priority lane and in total; '
'fits (on the total row) is whether the total share stays at or below slots * (1 - capacity_margin) '
'(tickq.capacity_lanes of tickq.capacity_at''s rows).';

CREATE OR REPLACE FUNCTION tickq.capacity_verdict_of(
    p_kinds jsonb
) RETURNS TABLE (
    fits boolean,
    slot_share numeric,
    budget numeric,
    slots integer,
    margin numeric,
    runs_per_tick numeric,
    worst_lane text,
    worst_lane_share numeric
)
LANGUAGE sql STABLE
AS $$
    WITH totals AS (SELECT * FROM tickq.capacity_lanes(p_kinds))
    SELECT t.fits, t.slot_share, t.budget, t.slots, s.capacity_margin, t.runs_per_tick, w.lane, w.slot_share
    FROM totals AS t
    CROSS JOIN tickq.settings AS s
    -- When the total does not fit, the lane to act on is the one that takes the most slots (the
    -- more urgent lane on a tie).
    LEFT JOIN LATERAL (
        SELECT l.lane, l.slot_share
        FROM totals AS l
        WHERE NOT t.fits AND l.lane <> 'total' AND l.slot_share > 0
        ORDER BY l.slot_share DESC, array_position(enum_range(NULL::tickq.priority), l.lane::tickq.priority)
        LIMIT 1
    ) AS w ON true
    WHERE t.lane = 'total'
$$;
COMMENT ON FUNCTION tickq.capacity_verdict_of(jsonb) IS
'What tickq check decides about the capacity of the kinds'' shares p_kinds (tickq.capacity_shares): '
'whether the total slot share fits the budget (slots less the capacity_margin, also returned), the '
'total share and runs per tick, and when it does not fit the lane that takes the most slots, with '
'its share.';

CREATE OR REPLACE FUNCTION tickq.capacity_verdict_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    fits boolean,
    slot_share numeric,
    budget numeric,
    slots integer,
    margin numeric,
    runs_per_tick numeric,
    worst_lane text,
    worst_lane_share numeric
)
LANGUAGE sql STABLE
AS $$
    SELECT * FROM tickq.capacity_verdict_of(tickq.capacity_shares(p_now))
$$;
COMMENT ON FUNCTION tickq.capacity_verdict_at(timestamptz) IS
'What tickq check decides about capacity (tickq.capacity_verdict_of the kinds'' shares at p_now): '
'whether the total slot share fits the budget (slots less the capacity_margin, also returned), the '
'total share and runs per tick, and when it does not fit the lane that takes the most slots, with '
'its share.';
