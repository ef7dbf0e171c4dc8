-- Migration 0073_metrics_kind.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- tickq.metrics_text reads every live kind once (tickq.metrics_kinds_at) and hands the rows to
-- one function per metric family: the row's type.
CREATE TYPE tickq.metrics_kind AS (
    name text,
    label text,
    outcomes bigint [],
    merged numeric,
    timed numeric,
    seconds numeric,
    buckets numeric [],
    last_ok timestamptz,
    lateness numeric,
    stale boolean,
    failure_streak integer,
    running boolean,
    paused boolean,
    weight integer
);
COMMENT ON TYPE tickq.metrics_kind IS
'A live kind as tickq.metrics_text reads it (tickq.metrics_kinds_at): its label value, its runs '
'that ended by outcome (ok to skipped), merged slots, runs with a duration, their seconds, the '
'cumulative counts per bound of metrics_buckets, the last success; lateness, stale, failure streak, '
'running, paused and weight.';
