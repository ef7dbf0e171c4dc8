-- 0027: what housekeeping prunes from job_run is kept as totals, and check-ins get their bound.
--
-- The totals: the counters of tickq.metrics_text (runs by outcome, merged slots, the duration
-- histogram) only ever grow: a counter that fell when old runs were pruned would read as a
-- reset and a false burst.
--
-- One row per kind and outcome, written only by tickq.housekeeping when it deletes runs; a
-- scrape adds the runs still in job_run. buckets counts the pruned runs whose duration was at
-- most each bound of tickq.metrics_buckets(), in order (cumulative, as Prometheus's buckets).

CREATE TABLE tickq.run_total (
    kind text NOT NULL REFERENCES tickq.job_kind (name) ON UPDATE CASCADE,
    outcome tickq.outcome NOT NULL,
    runs bigint NOT NULL DEFAULT 0,
    merged_slots bigint NOT NULL DEFAULT 0,
    timed_runs bigint NOT NULL DEFAULT 0,
    seconds double precision NOT NULL DEFAULT 0,
    buckets bigint[] NOT NULL DEFAULT '{}',
    last_finished_at timestamptz,
    PRIMARY KEY (kind, outcome)
);
COMMENT ON TABLE tickq.run_total IS
'Runs pruned from job_run by housekeeping, per kind and outcome: how many, the slots merged into '
'them, how many had a duration and their seconds, the cumulative counts per bound of '
'metrics_buckets(), the last finish. tickq.metrics_text adds the runs still in job_run.';

-- A check-in (the registry's ping_url, a kind's ping_url) waits at most ping_timeout for its
-- receiver, and is tried at most twice: a receiver that never answers cannot hold a tick long.
CREATE OR REPLACE FUNCTION tickq.registry_limits(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (key text, low numeric, high numeric, unit text)
LANGUAGE sql IMMUTABLE
AS $$
    -- Durations in seconds (unit 's'); counts and fractions as they are. A key of the [agents]
    -- section is spelled as in the file ("agents.max_turns"); a tool's key stands for every
    -- tool ("agents.tools.timeout" bounds agents.tools.NAME.timeout). days and months bound the
    -- calendar fields (a day 0 is refused apart: -31..-1 count from the month's end), on.nth the
    -- n of an nth weekday ("5th mon").
    VALUES
        ('slots', 1, 1000, ''),
        ('retries', 0, 100, ''),
        ('keep_runs', 1, 100000, ''),
        ('alert_after', 1, 1000, ''),
        ('capacity_margin', 0, 0.9, ''),
        ('tick', 1, 86400, 's'),
        ('stale_after', 1, 30 * 86400, 's'),
        ('lease_margin', 1, 86400, 's'),
        ('retry_base', 1, 86400, 's'),
        ('retry_max', 1, 7 * 86400, 's'),
        ('housekeeping_every', 1, 86400, 's'),
        ('housekeeping_timeout', 1, 7 * 86400, 's'),
        ('retention', 1, 3650 * 86400, 's'),
        ('alert_timeout', 1, 3600, 's'),
        ('ping_timeout', 1, 30, 's'),
        ('db_connect_timeout', 1, 600, 's'),
        ('db_statement_timeout', 1, 86400, 's'),
        ('db_lock_timeout', 1, 3600, 's'),
        ('every', 1, 366 * 86400, 's'),
        ('timeout', 1, 7 * 86400, 's'),
        ('days', -31, 31, ''),
        ('months', 1, 12, ''),
        ('on.nth', 1, 5, ''),
        ('agents.max_turns', 1, 6, ''),
        ('agents.timeout', 1, 600, 's'),
        ('agents.retries', 0, 10, ''),
        ('agents.deliver_timeout', 1, 300, 's'),
        ('agents.request_timeout', 1, 600, 's'),
        ('agents.http_attempts', 1, 10, ''),
        ('agents.tools.timeout', 1, 300, 's')
$$;
COMMENT ON FUNCTION tickq.registry_limits(timestamptz) IS
'The bounds of every number in the registry (durations in seconds): the one place they are '
'written. p_now is unused.';
