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
        SELECT k.name, k.priority, k.next_trigger, k.every, tickq.schedule_of(k) AS schedule, p.paused_until,
            greatest(k.due_at, p.paused_until) AS first,
            tickq.next_slot(tickq.schedule_of(k), greatest(k.due_at, p.paused_until, p_now)) AS second
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL (
            SELECT CASE WHEN k.paused_until > p_now THEN k.paused_until END AS paused_until
        ) AS p
        WHERE tickq.kind_claimable(k) AND k.retired_at IS NULL AND k.run_id IS NULL
            AND coalesce(p.paused_until, '-infinity') < 'infinity'
            AND greatest(k.due_at, p.paused_until) <= p_now + p_hours * interval '1 hour'
    ),
    calendar AS (
        SELECT ki.name, ki.second AS at, ki.schedule
        FROM kinds AS ki
        WHERE ki.every IS NULL AND ki.second <= p_now + p_hours * interval '1 hour'
        UNION ALL
        SELECT c.name, tickq.next_slot(c.schedule, c.at), c.schedule
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
        tickq.describe_schedule(tickq.schedule_of(k)),
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

CREATE OR REPLACE FUNCTION tickq.schedule_slots(
    p_name text,
    p_entry jsonb,
    p_default_timezone text,
    p_count integer,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (at timestamptz, local_at timestamp, timezone text, schedule text)
LANGUAGE plpgsql
AS $$
DECLARE
    v_schedule tickq.schedule;
    v_message text;
    v_key text;
BEGIN
    IF p_count IS NULL OR NOT p_count BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'a count of slots must be from 1 to 10000, got %', coalesce(p_count::text, 'none')
            USING ERRCODE = '22023';
    END IF;
    -- A kind's entry names the kind in a refusal; a schedule typed alone (p_name NULL) only its key.
    BEGIN
        v_schedule := tickq.parse_schedule(coalesce(p_name, 'schedule'), p_entry, p_default_timezone);
    EXCEPTION WHEN SQLSTATE 'TQ002' THEN
        GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
        IF p_name IS NOT NULL THEN
            RAISE;
        END IF;
        RAISE EXCEPTION '%: %', v_key, tickq.registry_problem(v_message, 'schedule', v_key) USING ERRCODE = '22023';
    END;
    RETURN QUERY SELECT n.slot, n.slot AT TIME ZONE v_schedule.timezone, v_schedule.timezone,
        tickq.describe_schedule(v_schedule)
    FROM tickq.next_slots(v_schedule, p_count, p_now) AS n (slot);
END
$$;
COMMENT ON FUNCTION tickq.schedule_slots(text, jsonb, text, integer, timestamptz) IS
'The next p_count slots after p_now of one schedule given as a registry entry (every, at with its '
'day filters, or cron; a kind''s, or a cron string typed alone when p_name is NULL), each in UTC '
'and in its zone, with the schedule in words: tickq next and tickq schedule. Refuses a bad '
'schedule like the registry (TQ002 naming kind and key; 22023 naming the key when p_name is NULL).';

CREATE OR REPLACE FUNCTION tickq.schedule_warnings(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, key text, warning text)
LANGUAGE sql STABLE
AS $$
    WITH lateness AS MATERIALIZED (SELECT * FROM tickq.tick_lateness(p_registry, p_now)),
    on_time AS MATERIALIZED (
        SELECT tickq.on_time_tick(coalesce((p_registry -> 'settings' ->> 'tick')::numeric, 300)::integer,
            ARRAY(SELECT l.grain FROM lateness AS l)) AS tick
    )
    -- Vixie cron's surprise: a day of the month and a weekday both restricted take a day that
    -- matches either, not both ("0 0 13 * 5" runs on every 13th and every Friday).
    SELECT k.name, 'cron', format('%s restricts both the day of the month and the weekday: cron '
        'runs it on a day that matches either (the OR rule), not only on days that match both; '
        'for both, write "at" with "days" and "on"', k.entry -> 'cron')
    FROM jsonb_each(coalesce(p_registry -> 'kinds', '{}'::jsonb)) AS k (name, entry)
    WHERE jsonb_typeof(k.entry -> 'cron') = 'string' AND tickq.cron_problem(k.entry ->> 'cron') IS NULL
        AND (tickq.cron_calendar(k.entry ->> 'cron', 'UTC')).either
    UNION ALL
    -- A slot between two ticks runs at the next tick (tickq.tick_lateness).
    SELECT l.kind, l.key, format('its slots fall between ticks: %s (%s) runs at %s, %s late with '
        'tick = "%s"; tick = "%s" keeps every slot on time', to_char(l.slot_time, t.shape), l.timezone,
        to_char(l.runs_time, t.shape), tickq.format_duration(l.late_by), tickq.format_duration(l.tick),
        tickq.format_duration(o.tick))
    FROM lateness AS l
    CROSS JOIN on_time AS o
    CROSS JOIN LATERAL (SELECT CASE WHEN extract(SECOND FROM l.slot_time) = 0 THEN 'HH24:MI'
        ELSE 'HH24:MI:SS' END AS shape) AS t
    WHERE l.late_by > '0'::interval
    ORDER BY 1, 2
$$;
COMMENT ON FUNCTION tickq.schedule_warnings(jsonb, timestamptz) IS
'What tickq check warns about in a registry (JSON) without refusing it: each cron string whose '
'day of the month and weekday are both restricted (Vixie''s OR rule), and each kind whose slots '
'fall between ticks, with how late the latest runs and the tick that keeps every slot on time '
'(tickq.tick_lateness, tickq.on_time_tick). Changes nothing.';
