-- The last 20 successful runs' durations have one owner (tickq.recent_durations): a kind's
-- expected duration and the page's p50 and p95 read the same runs, those ended by p_now.
BEGIN;
SELECT plan(4);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1},
    "kinds": {"a": {"command": ["x"], "every": 60, "timeout": 600}}}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

-- Six runs of 1..6 seconds ended by 10:06:10, then one of 100 seconds ended at 10:11:40.
DO $$
DECLARE
    v_at timestamptz;
    v_run bigint;
BEGIN
    FOR i IN 1..7 LOOP
        v_at := '2026-06-01 10:00Z'::timestamptz + make_interval(mins => CASE WHEN i = 7 THEN 10 ELSE i END);
        SELECT c.run_id INTO STRICT v_run FROM tickq.claim_jobs(1, 'host:1', v_at) AS c;
        PERFORM tickq.report_run(v_run, 'host:1', 'ok', 0, NULL,
            make_interval(secs => CASE WHEN i = 7 THEN 100 ELSE i END),
            v_at + make_interval(secs => CASE WHEN i = 7 THEN 100 ELSE i END));
    END LOOP;
END
$$;

SELECT is((SELECT k.p95 FROM tickq.report_kinds_at(24, '2026-06-01 10:30Z') AS k WHERE k.kind = 'a'),
    (SELECT e.expected FROM tickq.expected_duration('a', '2026-06-01 10:30Z') AS e),
    'the page''s p95 is the expected duration');
SELECT is((SELECT k.p95 FROM tickq.report_kinds_at(24, '2026-06-01 10:10Z') AS k WHERE k.kind = 'a'),
    interval '5.75 seconds', 'a run not ended by p_now is not among them (p95 of 1..6 s)');
SELECT is((SELECT e.expected FROM tickq.expected_duration('a', '2026-06-01 10:10Z') AS e),
    interval '5.75 seconds', 'nor for the expected duration');
SELECT is((SELECT k.p50 FROM tickq.report_kinds_at(24, '2026-06-01 10:30Z') AS k WHERE k.kind = 'a'),
    interval '4 seconds', 'once ended, it is (p50 of 1..6 s and 100 s)');

SELECT * FROM finish();
ROLLBACK;
