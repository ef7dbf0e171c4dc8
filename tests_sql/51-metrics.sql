-- Prometheus metrics: what housekeeping prunes stays counted (run_total), histogram buckets are
-- cumulative and end at the count, label values are escaped, the slots add up.
BEGIN;
SELECT plan(7);

SELECT * FROM tickq.sync_registry('{
    "settings": {"retention": 86400, "keep_runs": 1, "slots": 2},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 10:00Z');

-- three old runs of a: ok in 2s, ok in 30s (3 slots merged), failed in 2h; and one today
INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, finished_at, outcome, duration)
VALUES ('a', 1, 'schedule', 1, 'd', '2026-05-01 10:00Z', '2026-05-01 10:00:02Z', 'ok', '2 seconds'),
       ('a', 1, 'schedule', 3, 'd', '2026-05-01 11:00Z', '2026-05-01 11:00:30Z', 'ok', '30 seconds'),
       ('a', 1, 'schedule', 1, 'd', '2026-05-01 12:00Z', '2026-05-01 14:00Z', 'failed', '2 hours'),
       ('a', 1, 'schedule', 1, 'd', '2026-06-01 09:00Z', '2026-06-01 09:00:01Z', 'ok', '1 second');
INSERT INTO tickq.dispatcher_tick (host, dispatcher, last_tick_at)
VALUES (E'we"ird\\host', 'x:1', '2026-06-01 09:55Z');

CREATE TEMP TABLE before_prune AS
SELECT l.line FROM regexp_split_to_table(tickq.metrics_text('2026-06-01 10:00Z'), E'\n') AS l (line)
WHERE l.line ~ '^tickq_(runs_total|merged_slots_total|run_duration_seconds|last_success)';

SELECT results_eq($$SELECT runs_pruned FROM tickq.housekeeping(50000, '2026-06-01 10:00Z')$$,
    $$VALUES (3)$$, 'three old runs pruned');
SELECT results_eq($$SELECT outcome::text, runs, merged_slots, timed_runs, seconds, buckets
    FROM tickq.run_total ORDER BY outcome$$,
    $$VALUES ('failed', 1::bigint, 0::bigint, 1::bigint, 7200::float8, '{0,0,0,0,0,0,0,1,1}'::bigint[]),
        ('ok', 2, 2, 2, 32, '{0,1,1,2,2,2,2,2,2}')$$,
    'what they counted is kept per outcome, buckets cumulative');
SELECT set_eq(
    $$SELECT line FROM regexp_split_to_table(tickq.metrics_text('2026-06-01 10:00Z'), E'\n') AS l (line)
      WHERE line ~ '^tickq_(runs_total|merged_slots_total|run_duration_seconds|last_success)'$$,
    $$SELECT line FROM before_prune$$,
    'every counter, bucket and last success reads the same after the prune');
SELECT ok(tickq.metrics_text('2026-06-01 10:00Z') ~ E'\ntickq_runs_total\\{kind="a",outcome="ok"\\} 3\n',
    'three ok runs: two pruned, one kept');
SELECT ok(strpos(tickq.metrics_text('2026-06-01 10:00Z'), 'tickq_run_duration_seconds_bucket{kind="a",le="+Inf"} 4'
        || E'\ntickq_run_duration_seconds_sum{kind="a"} 7233\n') > 0,
    'the +Inf bucket is the count, the sum every second');
SELECT ok(strpos(tickq.metrics_text('2026-06-01 10:00Z'),
    E'tickq_last_tick_timestamp_seconds{host="we\\"ird\\\\host"}') > 0,
    'a label value has its quote and backslash escaped');
SELECT ok(tickq.metrics_text('2026-06-01 10:00Z')
    ~ E'\ntickq_slots 2\n.*\ntickq_slots_used 0\n.*\ntickq_slots_free 2\n',
    'slots: the limit, used and free');

SELECT * FROM finish();
ROLLBACK;
