-- 0027: what housekeeping prunes from job_run is kept as totals, so the counters of
-- tickq.metrics_text (runs by outcome, merged slots, the duration histogram) only ever grow:
-- a counter that fell when old runs were pruned would read as a reset and a false burst.
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
