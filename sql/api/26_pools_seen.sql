-- Weights and pools as people see them: who holds the global slots and each pool's slots now,
-- and how full each pool was over the status page's window. `tickq status`, `tickq explain`,
-- the page and the metrics read these; the claim (sql/api/03_claim.sql) is what decides.
--
-- A run of weight w holds w rows of tickq.slot and one row of tickq.pool_slot per pool it
-- names; these functions count rows, so what they show is what the claim holds.

CREATE OR REPLACE FUNCTION tickq.slot_holders_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint,
    kind text,
    dispatcher text,
    since timestamptz,
    leased_until timestamptz,
    weight integer,
    pools text[]
)
LANGUAGE sql STABLE
AS $$
    -- One row per run holding global slots (not one per slot row): weight is how many it holds.
    SELECT r.id, r.kind, r.dispatcher, coalesce(r.started_at, r.claimed_at), min(t.leased_until),
        count(*)::integer, coalesce(r.pools, '{}')
    FROM tickq.slot AS t
    INNER JOIN tickq.job_run AS r ON t.run_id = r.id
    WHERE r.claimed_at <= p_now
    GROUP BY r.id
    ORDER BY min(t.leased_until), r.id
$$;
COMMENT ON FUNCTION tickq.slot_holders_at(timestamptz) IS
'The runs holding global slots as of p_now, one row per run: kind, dispatcher, since (started, '
'else claimed), lease until, weight (the slot rows it holds) and the pools it names; the lease '
'that runs out first first.';

CREATE OR REPLACE FUNCTION tickq.slot_occupancy_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (slots integer, busy integer, free integer, holders jsonb)
LANGUAGE sql STABLE
AS $$
    -- Busy counts slot rows (a run holds its weight of them); after the limit was lowered
    -- they may outnumber the slots for a while: free is then 0, never negative.
    SELECT s.slots, b.busy, greatest(s.slots - b.busy, 0), coalesce((
        SELECT jsonb_agg(jsonb_build_object(
            'run_id', h.run_id, 'kind', h.kind, 'dispatcher', h.dispatcher, 'since', h.since,
            'leased_until', h.leased_until, 'weight', h.weight, 'pools', to_jsonb(h.pools)
        ) ORDER BY h.leased_until, h.run_id)
        FROM tickq.slot_holders_at(p_now) AS h
    ), '[]')
    FROM tickq.settings AS s
    CROSS JOIN LATERAL (
        SELECT count(*)::integer AS busy FROM tickq.slot AS t WHERE t.run_id IS NOT NULL
    ) AS b
$$;
COMMENT ON FUNCTION tickq.slot_occupancy_at(timestamptz) IS
'The global slots as of p_now: the limit, how many slot rows live runs hold (busy; a run holds '
'its weight), how many are free, and the runs holding them (slot_holders_at, as JSON).';

CREATE OR REPLACE FUNCTION tickq.pool_occupancy_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    pool text,
    slots integer,
    busy integer,
    free integer,
    holders jsonb,
    kinds integer,
    waiting integer
)
LANGUAGE sql STABLE
AS $$
    -- A pool's busy rows may outnumber its slots for a while after its slots were lowered
    -- (the runs holding them go on): free is then 0, never negative.
    SELECT
        p.name,
        p.slots,
        coalesce(h.busy, 0),
        greatest(p.slots - coalesce(h.busy, 0), 0),
        coalesce(h.holders, '[]'),
        coalesce(c.kinds, 0),
        coalesce(c.waiting, 0)
    FROM tickq.pool AS p
    LEFT JOIN LATERAL (
        SELECT count(*)::integer AS busy,
            jsonb_agg(jsonb_build_object(
                'run_id', r.id, 'kind', r.kind, 'dispatcher', r.dispatcher,
                'since', coalesce(r.started_at, r.claimed_at), 'leased_until', ps.leased_until,
                'weight', r.weight
            ) ORDER BY ps.leased_until, r.id) AS holders
        FROM tickq.pool_slot AS ps
        INNER JOIN tickq.job_run AS r ON ps.run_id = r.id
        WHERE ps.pool = p.name
    ) AS h ON true
    -- The kinds naming each pool, in one pass over the kinds that name any (pools <> '{}' is
    -- what the partial index job_kind_weighted covers), and those of them due and unclaimed.
    LEFT JOIN (
        SELECT u.pool, count(*)::integer AS kinds,
            count(*) FILTER (WHERE tickq.kind_due(k, p_now))::integer AS waiting
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL unnest(k.pools) AS u (pool)
        WHERE k.pools <> '{}' AND k.retired_at IS NULL
        GROUP BY u.pool
    ) AS c ON p.name = c.pool
    ORDER BY p.name
$$;
COMMENT ON FUNCTION tickq.pool_occupancy_at(timestamptz) IS
'Each pool of the registry as of p_now: its slots, how many are held (busy) and free, the runs '
'holding them (run, kind, dispatcher, since, lease until, weight), how many kinds name it and '
'how many of those are due and unclaimed (waiting).';

CREATE OR REPLACE VIEW tickq.pool_occupancy AS
SELECT * FROM tickq.pool_occupancy_at(now());
COMMENT ON VIEW tickq.pool_occupancy IS
'Each pool, now: slots, busy, free, the runs holding it, the kinds naming it and how many of '
'them wait. A pool of slots = 1 is a mutual exclusion: its one holder is who keeps the others out.';

CREATE OR REPLACE FUNCTION tickq.report_occupancy_at(
    p_hours numeric DEFAULT 24,
    p_steps integer DEFAULT 600,
    p_pool text DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (step_start timestamptz, in_use integer)
LANGUAGE sql STABLE
AS $$
    -- Occupancy as a step plot: runs overlapping the window counted at their claim (+) and
    -- finish (-); each of p_steps equal steps shows the most held at any moment in it, so a
    -- short peak is never averaged away. p_pool NULL: the global slots, a run counting its
    -- weight; a pool's name: that pool's slots, a run naming it counting one.
    -- The steps divide the page's own axis: p_hours back, or less on a queue younger than
    -- that (tickq.report_window_start_at, the one owner of where the window begins).
    WITH bounds AS (
        SELECT w.since, (p_now - w.since) / p_steps AS width
        FROM (SELECT tickq.report_window_start_at(p_hours, p_now) AS since) AS w
    ),
    runs AS (
        SELECT r.claimed_at, r.finished_at,
            CASE WHEN p_pool IS NULL THEN r.weight ELSE 1 END AS held
        FROM tickq.window_runs((SELECT b.since FROM bounds AS b), p_now) AS r
        WHERE r.dispatcher NOT LIKE 'simulator%' AND (p_pool IS NULL OR p_pool = ANY(r.pools))
    ),
    events AS (
        SELECT runs.claimed_at AS at, runs.held AS delta FROM runs
        UNION ALL
        SELECT runs.finished_at, -runs.held FROM runs WHERE runs.finished_at IS NOT NULL
    ),
    level AS (
        -- Finishes before claims at the same instant: a slot freed and taken again at once
        -- is one slot, not two.
        SELECT e.at, row_number() OVER w AS seq, sum(e.delta) OVER w AS in_use
        FROM events AS e
        WINDOW w AS (ORDER BY e.at, e.delta ROWS UNBOUNDED PRECEDING)
    ),
    per_step AS (
        -- Each event falls in one step (those before the window in step -1): the most held in
        -- the step, and the level its last event left behind (the greatest [seq, level] pair:
        -- an aggregate without an order, so the steps are hashed, not the events sorted again).
        SELECT
            greatest(-1, floor(extract(EPOCH FROM l.at - b.since) / extract(EPOCH FROM b.width)))::integer
                AS n,
            max(l.in_use) AS peak,
            (max(ARRAY[l.seq, l.in_use]))[2] AS level_after
        FROM level AS l
        CROSS JOIN bounds AS b
        GROUP BY 1
    ),
    steps AS (
        SELECT g.n, b.since + g.n * b.width AS step_start, ps.peak,
            -- the last earlier step that had events: its level is carried into this one
            max(ps.n) OVER (ORDER BY g.n ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS carried_from
        FROM bounds AS b
        CROSS JOIN generate_series(-1, p_steps - 1) AS g (n)
        LEFT JOIN per_step AS ps ON g.n = ps.n
    )
    SELECT st.step_start, greatest(st.peak, carried.level_after, 0)::integer
    FROM steps AS st
    LEFT JOIN per_step AS carried ON st.carried_from = carried.n
    WHERE st.n >= 0
    ORDER BY st.n
$$;
COMMENT ON FUNCTION tickq.report_occupancy_at(numeric, integer, text, timestamptz) IS
'Occupancy over the status page''s window (the last p_hours, or since the queue began when that '
'is later: tickq.report_window_start_at) in p_steps equal steps, the most held at any moment of each '
'step, from the runs'' claim and finish times: of the global slots (p_pool NULL; a run holds its '
'weight) or of one pool (a run naming it holds one of its slots).';

CREATE OR REPLACE FUNCTION tickq.report_slots_at(
    p_hours numeric DEFAULT 24,
    p_steps integer DEFAULT 600,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (step_start timestamptz, in_use integer)
LANGUAGE sql STABLE
AS $$
    SELECT o.step_start, o.in_use FROM tickq.report_occupancy_at(p_hours, p_steps, NULL, p_now) AS o
$$;
COMMENT ON FUNCTION tickq.report_slots_at(numeric, integer, timestamptz) IS
'Global slot occupancy over the status page''s window (tickq.report_occupancy_at) in p_steps equal '
'steps: the most slots held at any moment of each step, a run holding its weight.';

CREATE OR REPLACE FUNCTION tickq.report_pools_at(
    p_hours numeric DEFAULT 24,
    p_steps integer DEFAULT 600,
    p_limit integer DEFAULT 8,
    p_holders integer DEFAULT 3,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    pool text,
    slots integer,
    busy integer,
    free integer,
    peak integer,
    kinds integer,
    waiting integer,
    holders jsonb,
    drawn boolean,
    steps jsonb
)
LANGUAGE sql STABLE
AS $$
    -- Every pool with what it holds now and its peak over the window; the first p_limit of
    -- them (those full now or waited on first, then the busiest, then by name) carry their
    -- occupancy steps for the page's plot, so the page stays bounded however many pools there
    -- are. Steps are [step_start, in_use] pairs; holders the first p_holders runs (busy counts
    -- them all).
    WITH now_held AS (
        SELECT o.*, row_number() OVER (
            ORDER BY o.free = 0 AND o.busy > 0 DESC, o.waiting > 0 DESC, o.busy DESC, o.pool
        ) AS place
        FROM tickq.pool_occupancy_at(p_now) AS o
    )
    SELECT n.pool, n.slots, n.busy, n.free, CASE WHEN n.place <= p_limit THEN greatest(coalesce(s.peak, 0), n.busy) END,
        n.kinds, n.waiting,
        (SELECT coalesce(jsonb_agg(h.holder ORDER BY h.i), '[]')
            FROM jsonb_array_elements(n.holders) WITH ORDINALITY AS h (holder, i) WHERE h.i <= p_holders),
        n.place <= p_limit, s.steps
    FROM now_held AS n
    LEFT JOIN LATERAL (
        SELECT max(o.in_use) AS peak,
            jsonb_agg(jsonb_build_array(o.step_start, o.in_use) ORDER BY o.step_start) AS steps
        FROM tickq.report_occupancy_at(p_hours, p_steps, n.pool, p_now) AS o
        WHERE n.place <= p_limit
    ) AS s ON true
    ORDER BY n.place
$$;
COMMENT ON FUNCTION tickq.report_pools_at(numeric, integer, integer, integer, timestamptz) IS
'The status page''s pools: each pool''s slots, held and free now, peak over the last p_hours, the '
'kinds naming it, those waiting and the first p_holders runs holding it; the first p_limit (full '
'or waited on first, then busiest) also carry p_steps occupancy steps for the plot (drawn), the '
'others none.';
