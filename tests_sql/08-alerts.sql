-- Alert bookkeeping: each episode alerts once when it starts and once when it recovers.
BEGIN;
SELECT plan(10);

SELECT * FROM tickq.sync_registry('{
    "settings": {"alert_after": 2, "stale_after": 900, "slots": 3},
    "kinds": {
        "flaky": {"command": ["x"], "every": 300, "timeout": 60},
        "waiting": {"command": ["x"], "every": 3600, "timeout": 60}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name IN ('tickq.housekeeping', 'waiting');

CREATE FUNCTION pg_temp.fail_once(p_at timestamptz) RETURNS void LANGUAGE sql AS $$
    SELECT count(*) FROM tickq.report_run(
        (SELECT c.run_id FROM tickq.claim_jobs(1, 'd1', p_at) AS c), 'd1', 'failed', 1, 'boom', NULL, p_at)
$$;
SELECT pg_temp.fail_once('2026-06-01 10:00Z');
SELECT is_empty($$SELECT * FROM tickq.take_alerts('2026-06-01 10:01Z')$$, 'one failure is below alert_after');
SELECT pg_temp.fail_once('2026-06-01 10:05Z');
SELECT results_eq($$SELECT kind, event, failure_streak, last_outcome::text,
    output_tail FROM tickq.take_alerts('2026-06-01 10:06Z')$$,
    $$VALUES ('flaky', 'failing', 2, 'failed', 'boom')$$, 'the streak reaching alert_after alerts, with the last run');
SELECT is_empty($$SELECT * FROM tickq.take_alerts('2026-06-01 10:07Z')$$, 'and only once');
SELECT pg_temp.fail_once('2026-06-01 10:10Z');
SELECT is_empty($$SELECT * FROM tickq.take_alerts('2026-06-01 10:11Z')$$, 'a longer streak does not alert again');
SELECT results_eq(
    $$SELECT outcome::text FROM tickq.report_run(
        (SELECT c.run_id FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:15Z') AS c), 'd1', 'ok', 0, 'fine', NULL,
            '2026-06-01 10:15Z')$$,
    $$VALUES ('ok')$$, 'then a success');
SELECT results_eq($$SELECT kind, event, condition::text FROM tickq.take_alerts('2026-06-01 10:16Z')$$,
    $$VALUES ('flaky', 'recovered', 'failing')$$, 'recovery alerts once');
SELECT is_empty($$SELECT * FROM tickq.take_alerts('2026-06-01 10:17Z')$$, 'and only once');

-- stale: due and unclaimed past stale_after
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name = 'waiting';
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'flaky';
SELECT results_eq($$SELECT kind, event FROM tickq.take_alerts('2026-06-01 10:20Z')$$,
    $$VALUES ('waiting', 'stale')$$, 'a kind turning stale alerts');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:21Z')$$, $$VALUES ('waiting')$$,
    'claimed');
SELECT results_eq($$SELECT kind, event, condition::text FROM tickq.take_alerts('2026-06-01 10:22Z')$$,
    $$VALUES ('waiting', 'recovered', 'stale')$$, 'and recovers once claimed');

SELECT * FROM finish();
ROLLBACK;
