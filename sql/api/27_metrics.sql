-- Prometheus metrics (`tickq metrics`, the registry's metrics_file, `tickq serve`'s /metrics):
-- the text exposition format, written whole here so every reader gets the same lines.
-- tickq.metrics_kinds_at reads every live kind once (its counters from tickq.run_count, kept as
-- runs end by tickq.count_run, so a scrape reads no history and the counters never fall when
-- housekeeping prunes); one set-returning function per metric family gives each kind's lines
-- of it (metrics_runs_total, metrics_merged_slots, metrics_run_duration, metrics_last_success;
-- metrics_kind_gauges for the six one-value gauges of a kind; metrics_queue for the slots,
-- pools, hosts and settings), and tickq.metrics_text puts each family's HELP and TYPE before
-- its lines, in name order.

CREATE OR REPLACE FUNCTION tickq.metrics_buckets() RETURNS double precision[]
LANGUAGE sql IMMUTABLE
AS $$
    -- Seconds: a second, five, fifteen, a minute, five, fifteen, an hour, four, a day.
    SELECT '{1,5,15,60,300,900,3600,14400,86400}'::double precision[]
$$;
COMMENT ON FUNCTION tickq.metrics_buckets() IS
'The upper bounds (le, in seconds) of the run duration histogram of tickq.metrics_text, in order; '
'tickq.run_count.buckets (and run_total.buckets) count runs against the same bounds.';

CREATE OR REPLACE FUNCTION tickq.metrics_label(
    p_value text
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    -- A label value as the exposition format quotes it: backslash, double quote, newline.
    SELECT '"' || replace(replace(replace(p_value, '\', '\\'), '"', '\"'), E'\n', '\n') || '"'
$$;
COMMENT ON FUNCTION tickq.metrics_label(text) IS
'p_value as a quoted Prometheus label value (backslash, double quote and newline escaped).';

CREATE OR REPLACE FUNCTION tickq.metrics_families() RETURNS TABLE (family text, ord integer, kind text, help text)
LANGUAGE sql IMMUTABLE
AS $$
    VALUES
        ('tickq_runs_total', 1, 'counter', 'Runs that ended, by kind and outcome (lost: its lease ran out before a report).'),
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
$$;
COMMENT ON FUNCTION tickq.metrics_families() IS
'The metric families of tickq.metrics_text, in the order it writes them: name, type and help.';

CREATE OR REPLACE FUNCTION tickq.metrics_kinds_at(
    p_now timestamptz DEFAULT now()
) RETURNS SETOF tickq.metrics_kind
LANGUAGE sql STABLE
AS $$
    -- Every live kind once, by name (C): its counters (tickq.run_count: outcomes, ok to skipped,
    -- as tickq_runs_total lists them; buckets: the bounds of tickq.metrics_buckets) and its gauges
    -- as of p_now (stale: tickq.stale_due_at).
    SELECT k.name, tickq.metrics_label(k.name), coalesce(c.runs[2:], '{0,0,0,0,0,0,0}'), coalesce(c.merged_slots, 0),
        coalesce(c.timed_runs, 0), coalesce(c.seconds, 0), coalesce(c.buckets, '{0,0,0,0,0,0,0,0,0}'), c.last_ok,
        CASE
            -- not paused at p_now: a pause that ended counts as due since its end
            WHEN tickq.kind_due(k, p_now) THEN extract(EPOCH FROM p_now - greatest(k.due_at, k.paused_until))
            ELSE 0
        END,
        st.kind IS NOT NULL, k.failure_streak, k.run_id IS NOT NULL, coalesce(k.paused_until > p_now, false), k.weight
    FROM tickq.job_kind AS k
    LEFT JOIN tickq.run_count AS c ON k.name = c.kind
    LEFT JOIN (SELECT s.kind FROM tickq.stale_due_at(p_now) AS s) AS st ON k.name = st.kind
    WHERE k.retired_at IS NULL
    ORDER BY k.name COLLATE "C"
$$;
COMMENT ON FUNCTION tickq.metrics_kinds_at(timestamptz) IS
'Every live kind once (tickq.metrics_kind), by name (C), for tickq.metrics_text: its label, its runs '
'that ended by outcome (ok to skipped), the merged slots, runs with a duration, their seconds, the '
'cumulative counts per bound of metrics_buckets and the last success (tickq.run_count: kept or '
'pruned); and as of p_now its lateness, stale, failure streak, running, paused and weight.';

CREATE OR REPLACE FUNCTION tickq.metrics_runs_total(
    p_kinds tickq.metrics_kind[]
) RETURNS TABLE (who text, lines text)
LANGUAGE sql IMMUTABLE
AS $$
    -- A line per outcome but running, in the enum's order (tickq.metrics_kinds_at's outcomes).
    SELECT k.name, concat(
        'tickq_runs_total{kind=', k.label, ',outcome="ok"} ', k.outcomes[1], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="failed"} ', k.outcomes[2], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="timeout"} ', k.outcomes[3], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="interrupted"} ', k.outcomes[4], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="lost"} ', k.outcomes[5], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="cancelled"} ', k.outcomes[6], E'\n',
        'tickq_runs_total{kind=', k.label, ',outcome="skipped"} ', k.outcomes[7], E'\n')
    FROM unnest(p_kinds) AS k
$$;
COMMENT ON FUNCTION tickq.metrics_runs_total(tickq.metrics_kind[]) IS
'tickq_runs_total (counter): per kind of p_kinds (who) its lines, its runs that ended by outcome.';

CREATE OR REPLACE FUNCTION tickq.metrics_merged_slots(
    p_kinds tickq.metrics_kind[]
) RETURNS TABLE (who text, lines text)
LANGUAGE sql IMMUTABLE
AS $$
    SELECT k.name, concat('tickq_merged_slots_total{kind=', k.label, '} ', k.merged, E'\n') FROM unnest(p_kinds) AS k
$$;
COMMENT ON FUNCTION tickq.metrics_merged_slots(tickq.metrics_kind[]) IS
'tickq_merged_slots_total (counter): per kind of p_kinds (who) its line, the slots merged into its '
'runs.';

CREATE OR REPLACE FUNCTION tickq.metrics_run_duration(
    p_kinds tickq.metrics_kind[]
) RETURNS TABLE (who text, lines text)
LANGUAGE sql IMMUTABLE
AS $$
    -- A bucket per bound of tickq.metrics_buckets (cumulative), +Inf, the sum and the count.
    SELECT k.name, concat(
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[1], '"} ', k.buckets[1], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[2], '"} ', k.buckets[2], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[3], '"} ', k.buckets[3], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[4], '"} ', k.buckets[4], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[5], '"} ', k.buckets[5], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[6], '"} ', k.buckets[6], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[7], '"} ', k.buckets[7], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[8], '"} ', k.buckets[8], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="', x.b[9], '"} ', k.buckets[9], E'\n',
        'tickq_run_duration_seconds_bucket{kind=', k.label, ',le="+Inf"} ', k.timed, E'\n',
        'tickq_run_duration_seconds_sum{kind=', k.label, '} ', trim_scale(k.seconds), E'\n',
        'tickq_run_duration_seconds_count{kind=', k.label, '} ', k.timed, E'\n')
    FROM unnest(p_kinds) AS k
    CROSS JOIN (SELECT tickq.metrics_buckets() AS b) AS x
$$;
COMMENT ON FUNCTION tickq.metrics_run_duration(tickq.metrics_kind[]) IS
'tickq_run_duration_seconds (histogram): per kind of p_kinds (who) its lines: the runs at most '
'each bound of tickq.metrics_buckets long (cumulative), +Inf and the count (the runs with a '
'duration), the sum of their seconds.';

CREATE OR REPLACE FUNCTION tickq.metrics_last_success(
    p_kinds tickq.metrics_kind[]
) RETURNS TABLE (who text, lines text)
LANGUAGE sql IMMUTABLE
AS $$
    SELECT k.name,
        concat('tickq_last_success_timestamp_seconds{kind=', k.label, '} ', trim_scale(extract(EPOCH FROM k.last_ok)),
            E'\n')
    FROM unnest(p_kinds) AS k
    WHERE k.last_ok IS NOT NULL
$$;
COMMENT ON FUNCTION tickq.metrics_last_success(tickq.metrics_kind[]) IS
'tickq_last_success_timestamp_seconds (gauge): per kind of p_kinds that ever ended ok (who) its '
'line, when the last such run finished (Unix time).';

CREATE OR REPLACE FUNCTION tickq.metrics_kind_gauge(
    p_kinds tickq.metrics_kind[],
    p_family text
) RETURNS TABLE (who text, lines text)
LANGUAGE sql IMMUTABLE
AS $$
    SELECT k.name, concat(p_family, '{kind=', k.label, '} ', CASE p_family
        WHEN 'tickq_kind_lateness_seconds' THEN trim_scale(k.lateness)::text
        WHEN 'tickq_kind_stale' THEN k.stale::integer::text
        WHEN 'tickq_kind_failure_streak' THEN k.failure_streak::text
        WHEN 'tickq_kind_running' THEN k.running::integer::text
        WHEN 'tickq_kind_paused' THEN k.paused::integer::text
        WHEN 'tickq_kind_weight' THEN k.weight::text
    END, E'\n')
    FROM unnest(p_kinds) AS k
$$;
COMMENT ON FUNCTION tickq.metrics_kind_gauge(tickq.metrics_kind[], text) IS
'A gauge of a kind with one value, p_family (tickq_kind_lateness_seconds, _stale, _failure_streak, '
'_running, _paused, _weight): per kind of p_kinds (who) its line.';

CREATE OR REPLACE FUNCTION tickq.metrics_queue(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (family text, who text, lines text)
LANGUAGE sql STABLE
AS $$
    -- The slots, each pool (who: its name), each host's last tick (who: the host) and the
    -- settings the alert rules compare with.
    SELECT x.family, '', concat(x.family, ' ', x.value, E'\n')
    FROM tickq.slot_occupancy_at(p_now) AS o
    CROSS JOIN LATERAL (VALUES
        ('tickq_slots', o.slots::text), ('tickq_slots_used', o.busy::text), ('tickq_slots_free', o.free::text)
    ) AS x (family, value)
    UNION ALL
    SELECT x.family, o.pool, concat(x.family, '{pool=', tickq.metrics_label(o.pool), '} ', x.value, E'\n')
    FROM tickq.pool_occupancy_at(p_now) AS o
    CROSS JOIN LATERAL (VALUES
        ('tickq_pool_slots', o.slots::text), ('tickq_pool_slots_used', o.busy::text),
        ('tickq_pool_slots_free', o.free::text), ('tickq_pool_kinds_waiting', o.waiting::text)
    ) AS x (family, value)
    UNION ALL
    SELECT 'tickq_last_tick_timestamp_seconds', d.host, concat('tickq_last_tick_timestamp_seconds{host=',
        tickq.metrics_label(d.host), '} ', trim_scale(extract(EPOCH FROM d.last_tick_at)), E'\n')
    FROM tickq.dispatcher_tick AS d
    UNION ALL
    SELECT x.family, '', concat(x.family, ' ', x.value, E'\n')
    FROM tickq.settings AS s
    CROSS JOIN LATERAL (VALUES
        ('tickq_tick_seconds', extract(EPOCH FROM s.tick)::text),
        ('tickq_stale_after_seconds', extract(EPOCH FROM s.stale_after)::text),
        ('tickq_alert_after', s.alert_after::text)
    ) AS x (family, value)
$$;
COMMENT ON FUNCTION tickq.metrics_queue(timestamptz) IS
'The queue''s own families as of p_now, per family and name (who) a line: the slots (used, free), '
'each pool''s, each host''s last tick, and the tick, stale_after and alert_after the alert rules '
'compare with.';

CREATE OR REPLACE FUNCTION tickq.metrics_text(
    p_now timestamptz DEFAULT now()
) RETURNS text
LANGUAGE sql STABLE
-- 20,000 kinds make tens of MB of lines: sorted in memory, not on disk.
SET work_mem = '64MB'
AS $$
    -- Each family's HELP and TYPE, then its lines by name (C), families in their order: the
    -- lines of every family sorted at once and joined once.
    WITH k AS (SELECT array_agg(m) AS kinds FROM tickq.metrics_kinds_at(p_now) AS m),
    lines (family, who, lines) AS (
        SELECT 'tickq_runs_total', f.* FROM k CROSS JOIN tickq.metrics_runs_total(k.kinds) AS f
        UNION ALL
        SELECT 'tickq_merged_slots_total', f.* FROM k CROSS JOIN tickq.metrics_merged_slots(k.kinds) AS f
        UNION ALL
        SELECT 'tickq_run_duration_seconds', f.* FROM k CROSS JOIN tickq.metrics_run_duration(k.kinds) AS f
        UNION ALL
        SELECT 'tickq_last_success_timestamp_seconds', f.* FROM k CROSS JOIN tickq.metrics_last_success(k.kinds) AS f
        UNION ALL
        SELECT g.family, f.* FROM k
        CROSS JOIN unnest(ARRAY['tickq_kind_lateness_seconds', 'tickq_kind_stale', 'tickq_kind_failure_streak',
            'tickq_kind_running', 'tickq_kind_paused', 'tickq_kind_weight']) AS g (family)
        CROSS JOIN LATERAL tickq.metrics_kind_gauge(k.kinds, g.family) AS f
        UNION ALL
        SELECT * FROM tickq.metrics_queue(p_now)
    )
    SELECT string_agg(x.line, '' ORDER BY x.ord, x.sample, x.who COLLATE "C")
    FROM (
        SELECT f.ord, false AS sample, '' AS who,
            concat('# HELP ', f.family, ' ', f.help, E'\n# TYPE ', f.family, ' ', f.kind, E'\n') AS line
        FROM tickq.metrics_families() AS f
        UNION ALL
        SELECT f.ord, true, l.who, l.lines FROM lines AS l INNER JOIN tickq.metrics_families() AS f ON l.family = f.family
    ) AS x
$$;
COMMENT ON FUNCTION tickq.metrics_text(timestamptz) IS
'The queue as Prometheus metrics in the text exposition format, as of p_now: per kind its runs by '
'outcome, merged slots and a duration histogram (counters: every run that ended, pruned or not, '
'tickq.run_count), last success, lateness, stale, failure streak, running, paused and weight; the '
'slots used and free, and each pool''s with the kinds waiting on it; each host''s last tick; the '
'tick, stale_after and alert_after the rules compare with. Each family''s HELP and TYPE, then its '
'lines by name (one function per family over the kinds read once: tickq.metrics_kinds_at), in '
'tickq.metrics_families'' order.';
