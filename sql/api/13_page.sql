-- What the status page (`tickq report`, `tickq serve`) shows; `tickq upcoming` (also on the
-- page) is sql/api/17_upcoming.sql, `tickq history` sql/api/15_history.sql, the slot and pool
-- plots sql/api/26_pools_seen.sql. The page draws;
-- these functions decide. Each reads indexed ranges only: runs by job_run_finished_at (finished
-- in the window) plus job_run_running (still running), a kind's runs by job_run_kind_id, so a
-- page over a long history costs what its window holds.

CREATE OR REPLACE FUNCTION tickq.window_runs(
    p_since timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS SETOF tickq.job_run
LANGUAGE sql STABLE
AS $$
    SELECT r.* FROM tickq.job_run AS r
    WHERE r.finished_at >= p_since AND r.finished_at IS NOT NULL AND r.claimed_at <= p_now
    UNION ALL
    -- A live run is the one its kind's lease points at (job_kind.run_id; there is no index of
    -- running runs): the kinds, never a scan of the history.
    SELECT r.* FROM tickq.job_kind AS k
    INNER JOIN tickq.job_run AS r ON k.run_id = r.id
    WHERE k.run_id IS NOT NULL AND r.outcome = 'running' AND r.claimed_at <= p_now
$$;
COMMENT ON FUNCTION tickq.window_runs(timestamptz, timestamptz) IS
'The runs that overlap (p_since, p_now]: finished in it (an index range), or still running '
'(the runs the kinds'' leases point at). Never a scan of the history.';

CREATE OR REPLACE FUNCTION tickq.report_window_start_at(
    p_hours numeric DEFAULT 24,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- A queue younger than the window: the page's timeline begins when the queue began (its
    -- first kind, or an earlier run or the time it was due), so a new install uses the
    -- timeline's whole width instead of a few pixels at its right edge; never later than a
    -- second before p_now. A queue older than the window (the usual case: a kind created, or
    -- a run finished, before it; one probe of job_run_finished_at) reads no run of the window.
    SELECT CASE
        WHEN (SELECT min(k.created_at) FROM tickq.job_kind AS k) <= p_now - p_hours * interval '1 hour'
            OR EXISTS (SELECT FROM tickq.job_run AS r
                WHERE r.finished_at < p_now - p_hours * interval '1 hour' AND r.finished_at IS NOT NULL)
            THEN p_now - p_hours * interval '1 hour'
        ELSE greatest(
            p_now - p_hours * interval '1 hour',
            least(
                coalesce(least(
                    (SELECT min(k.created_at) FROM tickq.job_kind AS k),
                    (SELECT min(least(r.due_at, r.claimed_at))
                        FROM tickq.window_runs(p_now - p_hours * interval '1 hour', p_now) AS r)
                ), p_now - p_hours * interval '1 hour'),
                p_now - interval '1 second'
            )
        )
    END
$$;
COMMENT ON FUNCTION tickq.report_window_start_at(numeric, timestamptz) IS
'Where the status page''s window begins: p_hours before p_now, or when the queue began (its '
'first kind, or a run or its due time in the window if earlier) if that is later and no run '
'finished before the window; at least a second before p_now.';

CREATE OR REPLACE FUNCTION tickq.report_header_at(
    p_hours numeric DEFAULT 24,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    slots integer,
    slots_in_use integer,
    kinds integer,
    stale integer,
    failing integer,
    disabled integer,
    paused integer,
    unarmed integer,
    drift_recent integer,
    window_start timestamptz,
    window_end timestamptz,
    timezone text,
    tick interval,
    stale_after interval,
    failing_kinds text[]
)
LANGUAGE sql STABLE
AS $$
    SELECT
        s.slots,
        (SELECT count(*)::integer FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL),
        (SELECT count(*)::integer FROM tickq.job_kind AS k WHERE k.retired_at IS NULL),
        (SELECT count(*)::integer FROM tickq.stale_due_at(p_now)),
        (SELECT count(*)::integer FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.failure_streak >= s.alert_after),
        (SELECT count(*)::integer FROM tickq.job_kind AS k WHERE k.retired_at IS NULL AND NOT k.enabled),
        (SELECT count(*)::integer FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.enabled AND k.paused_until > p_now),
        (SELECT count(*)::integer FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.enabled AND k.irreversible AND k.armed_at IS NULL),
        (SELECT count(*)::integer FROM tickq.drift AS d
            WHERE d.detected_at > p_now - interval '1 day' AND d.detected_at <= p_now),
        tickq.report_window_start_at(p_hours, p_now),
        p_now,
        s.timezone,
        s.tick,
        s.stale_after,
        -- the kinds the failing count counts, the longest streak first
        (SELECT coalesce(array_agg(k.name ORDER BY k.failure_streak DESC, k.name), '{}')
            FROM tickq.job_kind AS k
            WHERE k.retired_at IS NULL AND k.failure_streak >= s.alert_after)
    FROM tickq.settings AS s
$$;
COMMENT ON FUNCTION tickq.report_header_at(numeric, timestamptz) IS
'The status page''s header as of p_now: slots in use and the limit, kinds, stale and failing '
'(streak at alert_after or more), disabled, paused and unarmed irreversible kinds, drift found '
'in the last day, the window (the last p_hours, or since the queue began: '
'report_window_start_at), the registry''s zone, tick and stale threshold, and the names of '
'the failing kinds.';

CREATE OR REPLACE FUNCTION tickq.report_dispatchers_at(
    p_hours numeric DEFAULT 24,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (host text, last_tick_at timestamptz, last_claim_at timestamptz, runs integer)
LANGUAGE sql STABLE
AS $$
    -- Per host (a dispatcher is host:pid, a new one each tick): its last tick that ended
    -- (tickq.dispatcher_tick), its last claim and its runs in the window.
    WITH claims AS (
        SELECT split_part(r.dispatcher, ':', 1) AS host, max(r.claimed_at) AS last_claim_at,
            count(*)::integer AS runs
        FROM tickq.window_runs(p_now - p_hours * interval '1 hour', p_now) AS r
        WHERE r.dispatcher NOT LIKE 'simulator%'
        GROUP BY 1
    )
    SELECT coalesce(t.host, c.host), t.last_tick_at, c.last_claim_at, coalesce(c.runs, 0)
    FROM (SELECT d.host, d.last_tick_at FROM tickq.dispatcher_tick AS d WHERE d.last_tick_at <= p_now) AS t
    FULL JOIN claims AS c ON t.host = c.host
    ORDER BY greatest(t.last_tick_at, c.last_claim_at) DESC NULLS LAST
$$;
COMMENT ON FUNCTION tickq.report_dispatchers_at(numeric, timestamptz) IS
'Each dispatcher host: its last tick that ended, its last claim and its runs in the last p_hours.';

CREATE OR REPLACE FUNCTION tickq.report_timeline_at(
    p_hours numeric DEFAULT 24,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    bar_start timestamptz,
    bar_end timestamptz,
    outcome tickq.outcome,
    runs integer,
    first_run_id bigint,
    wait_start timestamptz,
    longest_wait interval,
    stale_at timestamptz,
    longest_run interval
)
LANGUAGE sql STABLE
AS $$
    -- One bar per run, from its claim to its end, as long as it really was: the page draws a
    -- bar at least 2 px wide, and a pixel is a 900th of the window (the page's plot is 900 px,
    -- tickq/page/layout.py). Only runs the page could not draw apart are one bar: the next run
    -- of the kind, of the same outcome, starting less than a pixel after the last one's drawn
    -- end. Such a bar carries its count (the page marks it "N runs") and its longest run, so a
    -- kind that ran every minute all day is one bar of 1440 runs, while seven runs a minute
    -- apart over the last hour are seven bars. The wait before a bar (due to claimed) is the
    -- longest wait of the runs it holds; stale_at is where that wait passed stale_after.
    -- MATERIALIZED: once, not once per run (the planner would inline the call into each row).
    WITH frame AS MATERIALIZED (
        SELECT w.since, (p_now - w.since) / 900 AS px
        FROM (SELECT tickq.report_window_start_at(p_hours, p_now) AS since) AS w
    ),
    runs AS (
        -- Only what the bars need, as narrow as it goes (the sort below holds every run of
        -- the window): a run's wait and length are its claim's distance to due_at and bar_end.
        SELECT
            -- A run due during the kind's last pause waited on purpose until the pause ended:
            -- its wait for a slot starts there (as stale_due_at counts it).
            r.id, r.kind, k.priority, r.outcome, r.claimed_at,
            greatest(r.due_at, w.pause_end) AS due_at,
            greatest(r.claimed_at, f.since) AS bar_start,
            coalesce(r.finished_at, p_now) AS bar_end
        FROM tickq.window_runs(p_now - p_hours * interval '1 hour', p_now) AS r
        CROSS JOIN frame AS f
        INNER JOIN tickq.job_kind AS k ON r.kind = k.name
        CROSS JOIN LATERAL (
            SELECT CASE WHEN k.paused_until <= r.claimed_at AND r.due_at IS NOT NULL
                THEN k.paused_until END AS pause_end
        ) AS w
        WHERE r.dispatcher NOT LIKE 'simulator%'
    ),
    marked AS (
        -- One sort of the window's runs, in the order the page lists them (lane, kind, time):
        -- the bars are numbered in it, grouped in it and come out in it. A run starts a bar
        -- unless it follows one of its kind and outcome by less than a pixel after its drawn
        -- end (at least 2 px after its start).
        SELECT
            runs.*,
            CASE WHEN lag(runs.kind) OVER w = runs.kind AND lag(runs.outcome) OVER w = runs.outcome
                AND runs.bar_start
                    - lag(greatest(runs.bar_end, runs.bar_start + 2 * f.px)) OVER w < f.px
                THEN 0 ELSE 1 END AS starts_bar
        FROM runs
        CROSS JOIN frame AS f
        WINDOW w AS (ORDER BY runs.priority, runs.kind, runs.bar_start, runs.id)
    ),
    grouped AS (
        SELECT marked.*, sum(marked.starts_bar) OVER (
            ORDER BY marked.priority, marked.kind, marked.bar_start, marked.id) AS bar_no
        FROM marked
    )
    SELECT
        g.kind,
        g.priority,
        min(g.bar_start),
        max(g.bar_end),
        min(g.outcome::text)::tickq.outcome,
        count(*)::integer,
        min(g.id),
        (array_agg(g.due_at ORDER BY w.waited DESC, g.id))[1],
        max(w.waited),
        CASE WHEN max(w.waited) > s.stale_after
            THEN (array_agg(g.due_at ORDER BY w.waited DESC, g.id))[1] + s.stale_after END,
        max(g.bar_end - g.claimed_at)
    FROM grouped AS g
    CROSS JOIN LATERAL (SELECT g.claimed_at - coalesce(g.due_at, g.claimed_at) AS waited) AS w
    CROSS JOIN tickq.settings AS s
    GROUP BY g.priority, g.kind, g.bar_no, s.stale_after
    ORDER BY g.priority, g.kind, g.bar_no
$$;
COMMENT ON FUNCTION tickq.report_timeline_at(numeric, timestamptz) IS
'The status page''s timeline over its window (report_window_start_at): a bar per run at its real '
'length; runs of one outcome the page cannot draw apart (less than a 900th of the window after '
'the last one''s drawn end, a bar being at least two 900ths) are one bar with their count and '
'longest run. Each bar has the longest wait before it and where that wait went stale (a run '
'due during its kind''s last pause waits from the pause''s end).';

CREATE OR REPLACE FUNCTION tickq.report_waiting_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, priority tickq.priority, due_at timestamptz, waiting interval, stale boolean)
LANGUAGE sql STABLE
AS $$
    -- Kinds due now and not yet claimed: their wait is still going on at the right edge. A
    -- paused kind waits on purpose and an unarmed one for a person, not a slot (as
    -- stale_due_at): neither is drawn; a pause that ended counts as due since its end.
    SELECT k.name, k.priority, w.since, p_now - w.since, w.since <= p_now - s.stale_after
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    CROSS JOIN LATERAL (SELECT greatest(k.due_at, k.paused_until) AS since) AS w
    WHERE tickq.kind_due(k, p_now)
    ORDER BY w.since, k.name
$$;
COMMENT ON FUNCTION tickq.report_waiting_at(timestamptz) IS
'Enabled kinds due and unclaimed as of p_now (the waits still open, since the due time or the '
'end of a pause), with whether each is stale; paused and unarmed kinds are not waiting for a slot.';

CREATE OR REPLACE FUNCTION tickq.report_kinds_at(
    p_hours numeric DEFAULT 24,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    schedule text,
    state text,
    last_outcome tickq.outcome,
    last_finished_at timestamptz,
    failure_streak integer,
    next_due_at timestamptz,
    p50 interval,
    p95 interval,
    recent_failures jsonb
)
LANGUAGE sql STABLE
AS $$
    SELECT
        q.kind, q.priority, q.schedule, q.state, q.last_outcome, q.last_finished_at,
        q.failure_streak, q.next_due_at, d.p50, d.p95,
        coalesce(f.failures, '[]'::jsonb)
    FROM tickq.queue_status_at(p_now) AS q
    -- Durations of the last 20 successful runs, as expected_duration reads them.
    LEFT JOIN LATERAL (
        SELECT
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(EPOCH FROM ok.duration))
            * interval '1 second' AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(EPOCH FROM ok.duration))
            * interval '1 second' AS p95
        FROM tickq.recent_durations(q.kind, p_now) AS ok
    ) AS d ON true
    -- The last three failures in the window of each kind, each with the end of its output (the
    -- page escapes it: output is untrusted text). One range of job_run_finished_at for all
    -- kinds: a probe per kind would read every run the kind ever had.
    LEFT JOIN (
        SELECT x.kind, jsonb_agg(jsonb_build_object(
            'run_id', x.id, 'outcome', x.outcome, 'exit_code', x.exit_code,
            'finished_at', x.finished_at, 'output_tail', right(x.output_tail, 2000))
            ORDER BY x.finished_at DESC) AS failures
        FROM (
            SELECT r.kind, r.id, r.outcome, r.exit_code, r.finished_at, r.output_tail,
                row_number() OVER (PARTITION BY r.kind ORDER BY r.finished_at DESC, r.id DESC) AS n
            FROM tickq.job_run AS r
            WHERE r.finished_at >= p_now - p_hours * interval '1 hour' AND r.finished_at <= p_now
                AND r.outcome IN ('failed', 'timeout', 'lost')
        ) AS x
        WHERE x.n <= 3
        GROUP BY x.kind
    ) AS f ON q.kind = f.kind
    WHERE q.state <> 'retired'
$$;
COMMENT ON FUNCTION tickq.report_kinds_at(numeric, timestamptz) IS
'Per kind for the status page: schedule in words, state, last outcome, failure streak, next due, '
'p50/p95 of the last 20 successful durations, and the last three failures of the last p_hours '
'with the end of their output.';
