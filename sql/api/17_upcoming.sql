-- What falls due next (`tickq upcoming`, the status page's Upcoming table): only runs a claim
-- will take, in the order it will take them.

CREATE OR REPLACE FUNCTION tickq.upcoming_at(
    p_hours numeric DEFAULT 24,
    p_limit integer DEFAULT 100,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    due_at timestamptz,
    kind text,
    priority tickq.priority,
    trigger tickq.run_trigger,
    schedule text,
    held text,
    paused_until timestamptz,
    total integer
)
LANGUAGE sql STABLE
AS $$
    -- What falls due next, in order, as claim_jobs will take it: each enabled kind's due time (a
    -- retry, a merged late slot or the next slot; for a kind paused until a time, that time,
    -- when the missed slots run as one), then the slots after it from tickq.next_slot, the one
    -- schedule rule. An every cadence repeats exactly after its first slot, so its later slots
    -- are counted on from there; a calendar asks next_slot for each. The first p_limit runs and
    -- each kind's next run are listed, total counts every run in the window. A kind no claim will take (unarmed irreversible, paused
    -- until resumed) is one row after them with held saying why and no due time.
    WITH RECURSIVE kinds AS (
        SELECT k.name, k.priority, k.next_trigger, k.every, k.every_offset, k.at_times,
            k.on_days, k.timezone, p.paused_until,
            greatest(k.due_at, p.paused_until) AS first,
            tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.timezone,
                greatest(k.due_at, p.paused_until, p_now))
                AS second
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL (
            SELECT CASE WHEN k.paused_until > p_now THEN k.paused_until END AS paused_until
        ) AS p
        WHERE k.enabled AND k.retired_at IS NULL AND k.run_id IS NULL
            AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
            AND coalesce(p.paused_until, '-infinity') < 'infinity'
            AND greatest(k.due_at, p.paused_until) <= p_now + p_hours * interval '1 hour'
    ),
    calendar AS (
        SELECT ki.name, ki.second AS at, ki.at_times, ki.on_days, ki.timezone
        FROM kinds AS ki
        WHERE ki.every IS NULL AND ki.second <= p_now + p_hours * interval '1 hour'
        UNION ALL
        SELECT c.name, tickq.next_slot(NULL, NULL, c.at_times, c.on_days, c.timezone, c.at),
            c.at_times, c.on_days, c.timezone
        FROM calendar AS c
        WHERE c.at <= p_now + p_hours * interval '1 hour'
    ),
    slots AS (
        SELECT ki.name, ki.first AS at, ki.next_trigger AS trigger,
            CASE WHEN ki.paused_until = ki.first THEN ki.paused_until END AS paused_until
        FROM kinds AS ki
        UNION ALL
        SELECT ki.name, ki.second + g.n * ki.every, 'schedule'::tickq.run_trigger, NULL
        FROM kinds AS ki
        CROSS JOIN LATERAL generate_series(0, least(p_limit - 2,
            floor(extract(EPOCH FROM p_now + p_hours * interval '1 hour' - ki.second)
                / extract(EPOCH FROM ki.every))::integer)) AS g (n)
        WHERE ki.every IS NOT NULL
        UNION ALL
        SELECT c.name, c.at, 'schedule'::tickq.run_trigger, NULL FROM calendar AS c
    ),
    counted AS (
        -- Every runs past the generated ones are counted, not listed.
        SELECT (SELECT count(*) FROM slots AS sl WHERE sl.at <= p_now + p_hours * interval '1 hour')
            + coalesce((SELECT sum(greatest(0, floor(extract(EPOCH FROM
                p_now + p_hours * interval '1 hour' - ki.second) / extract(EPOCH FROM ki.every)) + 1
                - greatest(0, p_limit - 1)))
                FROM kinds AS ki WHERE ki.every IS NOT NULL), 0) AS total
    ),
    ranked AS (
        SELECT sl.at, k.name, k.priority, sl.trigger,
            CASE WHEN sl.paused_until IS NOT NULL THEN 'paused' END AS held, sl.paused_until,
            row_number() OVER (ORDER BY sl.at, k.priority, k.name) AS n,
            row_number() OVER (PARTITION BY k.name ORDER BY sl.at) AS nth
        FROM slots AS sl
        INNER JOIN kinds AS k ON sl.name = k.name
        WHERE sl.at <= p_now + p_hours * interval '1 hour'
    ),
    listed AS (
        -- The first p_limit runs, and each kind's next run even past them: a kind due every
        -- minute must not hide when a daily one (an agent's) runs next.
        SELECT r.at, r.name, r.priority, r.trigger, r.held, r.paused_until
        FROM ranked AS r
        WHERE r.n <= p_limit OR r.nth = 1
    ),
    held AS (
        SELECT NULL::timestamptz AS at, k.name, k.priority, k.next_trigger AS trigger,
            CASE WHEN k.irreversible AND k.armed_at IS NULL THEN 'unarmed' ELSE 'paused' END AS held,
            NULL::timestamptz AS paused_until
        FROM tickq.job_kind AS k
        WHERE k.enabled AND k.retired_at IS NULL AND k.run_id IS NULL
            AND ((k.irreversible AND k.armed_at IS NULL) OR k.paused_until = 'infinity')
    )
    SELECT u.at, u.name, u.priority, u.trigger,
        tickq.describe_schedule(k.every, k.every_offset, k.at_times, k.on_days, k.timezone, p_now),
        u.held, u.paused_until, (SELECT c.total::integer FROM counted AS c)
    FROM (SELECT * FROM listed UNION ALL SELECT * FROM held) AS u
    INNER JOIN tickq.job_kind AS k ON u.name = k.name
    ORDER BY u.at NULLS LAST, u.priority, u.name
$$;
COMMENT ON FUNCTION tickq.upcoming_at(numeric, integer, timestamptz) IS
'The next p_limit runs due within p_hours of p_now (and each kind''s next run past them), in '
'order, as claims will take them: each '
'enabled, unleased kind''s due time (a kind paused until a time: that time, held = paused), then '
'its following slots from tickq.next_slot (correct across daylight-saving changes); total counts '
'every run in the window, listed or not. After them one row per kind no claim will take, with '
'no due time and held = unarmed (an irreversible kind no person has run) or paused (until '
'resumed).';
