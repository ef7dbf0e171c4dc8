-- tickq.metrics_text as it was at 5ef5668 (sql/api/27_metrics.sql), the reference the new one must
-- print the same text as (tests_py/test_metrics_counts.py) and the speed it is measured against
-- (bench/metrics_scale.py --before): every counter computed from the whole history at each
-- scrape. Created in the session's temporary schema; it reads the queue's own tables.
CREATE OR REPLACE FUNCTION pg_temp.metrics_text_before(
    p_now timestamptz DEFAULT now()
) RETURNS text
LANGUAGE sql STABLE
AS $$
    WITH kinds AS (
        SELECT k.name, k.failure_streak, k.run_id IS NOT NULL AS running, k.weight,
            coalesce(k.paused_until > p_now, false) AS paused,
            CASE
                WHEN k.enabled AND k.run_id IS NULL AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
                    AND NOT coalesce(k.paused_until > p_now, false)
                    AND greatest(k.due_at, k.paused_until) <= p_now
                    THEN extract(EPOCH FROM p_now - greatest(k.due_at, k.paused_until))
                ELSE 0
            END AS lateness,
            EXISTS (SELECT FROM tickq.stale_due_at(p_now) AS st WHERE st.kind = k.name) AS stale
        FROM tickq.job_kind AS k
        WHERE k.retired_at IS NULL
    ),
    outcomes AS (
        SELECT o.outcome, o.n
        FROM unnest(enum_range(NULL::tickq.outcome)) WITH ORDINALITY AS o (outcome, n)
        WHERE o.outcome <> 'running'
    ),
    bounds AS (
        SELECT b.bound, b.n FROM unnest(tickq.metrics_buckets()) WITH ORDINALITY AS b (bound, n)
    ),
    -- Every finished run, kept or pruned, per kind and outcome.
    finished AS (
        SELECT r.kind, r.outcome, count(*) AS runs, sum(greatest(r.slots - 1, 0)) AS merged,
            count(r.duration) AS timed, coalesce(sum(extract(EPOCH FROM r.duration)), 0) AS seconds,
            max(r.finished_at) AS last_finished_at
        FROM tickq.job_run AS r
        WHERE r.outcome <> 'running'
        GROUP BY r.kind, r.outcome
        UNION ALL
        SELECT t.kind, t.outcome, t.runs, t.merged_slots, t.timed_runs, t.seconds::numeric, t.last_finished_at
        FROM tickq.run_total AS t
    ),
    per_kind AS (
        SELECT k.name, sum(f.merged) AS merged, sum(f.timed) AS timed, sum(f.seconds) AS seconds,
            max(f.last_finished_at) FILTER (WHERE f.outcome = 'ok') AS last_ok
        FROM kinds AS k
        LEFT JOIN finished AS f ON k.name = f.kind
        GROUP BY k.name
    ),
    -- Runs at most each bound long, per kind: kept runs counted here, pruned ones from run_total.
    histogram AS (
        SELECT k.name, b.n, b.bound,
            (SELECT count(*) FROM tickq.job_run AS r
                WHERE r.kind = k.name AND r.outcome <> 'running'
                    AND extract(EPOCH FROM r.duration) <= b.bound)
            + (SELECT coalesce(sum(t.buckets[b.n]), 0) FROM tickq.run_total AS t WHERE t.kind = k.name)
            AS le
        FROM kinds AS k CROSS JOIN bounds AS b
    ),
    slots AS (
        SELECT o.slots AS total, o.busy AS used, o.free FROM tickq.slot_occupancy_at(p_now) AS o
    ),
    families (family, ord, kind, help) AS (
        VALUES
            ('tickq_runs_total', 1, 'counter',
                'Runs that ended, by kind and outcome (lost: its lease ran out before a report).'),
            ('tickq_merged_slots_total', 2, 'counter',
                'Scheduled slots of a kind merged into another of its runs (missed while no tick ran).'),
            ('tickq_run_duration_seconds', 3, 'histogram', 'How long the runs of a kind took.'),
            ('tickq_last_success_timestamp_seconds', 4, 'gauge',
                'When the last run of a kind that ended ok finished (Unix time).'),
            ('tickq_kind_lateness_seconds', 5, 'gauge',
                'How long a due kind has waited unclaimed; 0 when not due, running, paused, disabled or unarmed.'),
            ('tickq_kind_stale', 6, 'gauge', '1 while a kind is due and unclaimed past stale_after.'),
            ('tickq_kind_failure_streak', 7, 'gauge', 'Runs of a kind in a row that did not end ok.'),
            ('tickq_kind_running', 8, 'gauge', '1 while a run of the kind holds a lease.'),
            ('tickq_kind_paused', 9, 'gauge', '1 while an operator''s pause of the kind lasts.'),
            ('tickq_slots', 10, 'gauge', 'The slot limit: how many runs may go on at once.'),
            ('tickq_slots_used', 11, 'gauge', 'Slots held by live runs (a run holds its kind''s weight).'),
            ('tickq_slots_free', 12, 'gauge', 'Slots a claim could take now.'),
            ('tickq_kind_weight', 13, 'gauge', 'The slots each run of a kind takes (its weight).'),
            ('tickq_pool_slots', 14, 'gauge', 'A pool''s limit: how many runs of the kinds naming it may go on at once.'),
            ('tickq_pool_slots_used', 15, 'gauge', 'Slots of a pool held by live runs.'),
            ('tickq_pool_slots_free', 16, 'gauge', 'Slots of a pool a claim could take now.'),
            ('tickq_pool_kinds_waiting', 17, 'gauge', 'Kinds naming a pool that are due and unclaimed.'),
            ('tickq_last_tick_timestamp_seconds', 18, 'gauge',
                'When the last tick on each dispatcher host ended (Unix time).'),
            ('tickq_tick_seconds', 19, 'gauge', 'The registry''s tick: how often the timer should fire.'),
            ('tickq_stale_after_seconds', 20, 'gauge', 'How long a due kind may wait before it is stale.'),
            ('tickq_alert_after', 21, 'gauge', 'The failure streak at which a kind is alerted as failing.')
    ),
    samples (family, sample, labels, value, who, sub) AS (
        SELECT 'tickq_runs_total', 'tickq_runs_total',
            format('kind=%s,outcome=%s', tickq.metrics_label(k.name), tickq.metrics_label(o.outcome::text)),
            (SELECT coalesce(sum(f.runs), 0) FROM finished AS f WHERE f.kind = k.name AND f.outcome = o.outcome)::text,
            k.name, o.n::text
        FROM kinds AS k CROSS JOIN outcomes AS o
        UNION ALL
        SELECT 'tickq_merged_slots_total', 'tickq_merged_slots_total', format('kind=%s', tickq.metrics_label(p.name)),
            coalesce(p.merged, 0)::text, p.name, ''
        FROM per_kind AS p
        UNION ALL
        SELECT 'tickq_run_duration_seconds', 'tickq_run_duration_seconds_bucket',
            format('kind=%s,le="%s"', tickq.metrics_label(h.name), h.bound), h.le::text, h.name, h.n::text
        FROM histogram AS h
        UNION ALL
        SELECT 'tickq_run_duration_seconds', x.sample, format('kind=%s', tickq.metrics_label(p.name)) || x.labels,
            x.value, p.name, x.ord
        FROM per_kind AS p
        CROSS JOIN LATERAL (VALUES
            ('tickq_run_duration_seconds_bucket', ',le="+Inf"', coalesce(p.timed, 0)::text, 'x'),
            ('tickq_run_duration_seconds_sum', '', trim_scale(coalesce(p.seconds, 0))::text, 'y'),
            ('tickq_run_duration_seconds_count', '', coalesce(p.timed, 0)::text, 'z')
        ) AS x (sample, labels, value, ord)
        UNION ALL
        SELECT 'tickq_last_success_timestamp_seconds', 'tickq_last_success_timestamp_seconds',
            format('kind=%s', tickq.metrics_label(p.name)), trim_scale(extract(EPOCH FROM p.last_ok))::text, p.name, ''
        FROM per_kind AS p WHERE p.last_ok IS NOT NULL
        UNION ALL
        SELECT x.family, x.family, format('kind=%s', tickq.metrics_label(k.name)), x.value, k.name, ''
        FROM kinds AS k
        CROSS JOIN LATERAL (VALUES
            ('tickq_kind_lateness_seconds', trim_scale(k.lateness)::text),
            ('tickq_kind_stale', k.stale::integer::text),
            ('tickq_kind_failure_streak', k.failure_streak::text),
            ('tickq_kind_running', k.running::integer::text),
            ('tickq_kind_paused', k.paused::integer::text),
            ('tickq_kind_weight', k.weight::text)
        ) AS x (family, value)
        UNION ALL
        SELECT x.family, x.family, '', x.value, '', ''
        FROM slots AS s
        CROSS JOIN LATERAL (VALUES
            ('tickq_slots', s.total::text),
            ('tickq_slots_used', s.used::text),
            ('tickq_slots_free', s.free::text)
        ) AS x (family, value)
        UNION ALL
        SELECT x.family, x.family, format('pool=%s', tickq.metrics_label(o.pool)), x.value, o.pool, ''
        FROM tickq.pool_occupancy_at(p_now) AS o
        CROSS JOIN LATERAL (VALUES
            ('tickq_pool_slots', o.slots::text),
            ('tickq_pool_slots_used', o.busy::text),
            ('tickq_pool_slots_free', o.free::text),
            ('tickq_pool_kinds_waiting', o.waiting::text)
        ) AS x (family, value)
        UNION ALL
        SELECT 'tickq_last_tick_timestamp_seconds', 'tickq_last_tick_timestamp_seconds',
            format('host=%s', tickq.metrics_label(d.host)), trim_scale(extract(EPOCH FROM d.last_tick_at))::text, d.host, ''
        FROM tickq.dispatcher_tick AS d
        UNION ALL
        SELECT x.family, x.family, '', x.value, '', ''
        FROM tickq.settings AS s
        CROSS JOIN LATERAL (VALUES
            ('tickq_tick_seconds', extract(EPOCH FROM s.tick)::text),
            ('tickq_stale_after_seconds', extract(EPOCH FROM s.stale_after)::text),
            ('tickq_alert_after', s.alert_after::text)
        ) AS x (family, value)
    )
    SELECT string_agg(block, '' ORDER BY ord)
    FROM (
        SELECT fam.ord,
            format(E'# HELP %s %s\n# TYPE %s %s\n', fam.family, fam.help, fam.family, fam.kind)
            || coalesce((
                SELECT string_agg(
                    s.sample || CASE WHEN s.labels = '' THEN '' ELSE '{' || s.labels || '}' END || ' ' || s.value || E'\n',
                    '' ORDER BY s.who COLLATE "C", s.sub COLLATE "C"
                )
                FROM samples AS s WHERE s.family = fam.family
            ), '') AS block
        FROM families AS fam
    ) AS blocks
$$;
