-- The metrics' counters kept as runs end (tickq.run_count, trigger run_counted): a report adds
-- its run, a lost run corrected by a late report moves from lost to its outcome, a duration on a
-- bucket's bound counts in it, housekeeping's pruning changes nothing, a forgotten kind takes its
-- counts along; and the families' functions give a kind its lines.
BEGIN;
SELECT plan(11);

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "settings": {"retention": 86400, "keep_runs": 1, "slots": 2},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 10:00Z')$$,
    'synced');

SELECT tickq.report_run(c.run_id, 'd', 'ok', 0, NULL, '60 seconds', '2026-06-01 10:01Z')
FROM tickq.claim_manual('a', 'd', NULL, '2026-06-01 10:00Z') AS c;
SELECT is((SELECT (runs, timed_runs, seconds, buckets)::text FROM tickq.run_count WHERE kind = 'a'),
    '("{0,1,0,0,0,0,0,0}",1,60.000000,"{0,0,0,1,1,1,1,1,1}")', 'a report counts its run; 60 s is in the bucket of 60');

SELECT tickq.claim_manual('a', 'd', NULL, '2026-06-01 11:00Z');
SELECT tickq.expire_leases('2026-06-01 12:00Z');
SELECT is((SELECT runs FROM tickq.run_count WHERE kind = 'a'), '{0,1,0,0,0,1,0,0}'::bigint[],
    'a lease run out: a lost run');
SELECT tickq.report_late_run(r.id, 'd', 'ok', 0, NULL, '2 seconds', '2026-06-01 12:05Z')
FROM tickq.job_run AS r WHERE r.outcome = 'lost';
SELECT results_eq(
    $$SELECT runs, seconds, buckets FROM tickq.run_count WHERE kind = 'a'$$,
    $$VALUES ('{0,2,0,0,0,0,0,0}'::bigint[], 62.000000::numeric, '{0,1,1,2,2,2,2,2,2}'::bigint[])$$,
    'reported late, it moves from lost to ok, with its own duration');
SELECT is((SELECT last_ok FROM tickq.run_count WHERE kind = 'a'),
    (SELECT max(finished_at) FROM tickq.job_run WHERE kind = 'a' AND outcome = 'ok'), 'and the last success is its');

CREATE TEMP TABLE counted AS SELECT * FROM tickq.run_count;
SELECT cmp_ok((SELECT runs_pruned FROM tickq.housekeeping(50000, '2026-06-03 10:00Z')), '>', 0, 'runs pruned');
SELECT set_eq('SELECT * FROM tickq.run_count', 'SELECT * FROM counted', 'and every count as it was');

CREATE TEMP TABLE kinds AS SELECT array_agg(m) AS a FROM tickq.metrics_kinds_at('2026-06-03 10:00Z') AS m;
SELECT is((SELECT f.lines FROM kinds AS k CROSS JOIN tickq.metrics_runs_total(k.a) AS f WHERE f.who = 'a'),
    E'tickq_runs_total{kind="a",outcome="ok"} 2\ntickq_runs_total{kind="a",outcome="failed"} 0\n'
    || E'tickq_runs_total{kind="a",outcome="timeout"} 0\ntickq_runs_total{kind="a",outcome="interrupted"} 0\n'
    || E'tickq_runs_total{kind="a",outcome="lost"} 0\ntickq_runs_total{kind="a",outcome="cancelled"} 0\n'
    || E'tickq_runs_total{kind="a",outcome="skipped"} 0\n',
    'a kind''s runs by outcome, every outcome a line, in order');
SELECT is((SELECT f.lines FROM kinds AS k CROSS JOIN tickq.metrics_kind_gauge(k.a, 'tickq_kind_weight') AS f
        WHERE f.who = 'a'), E'tickq_kind_weight{kind="a"} 1\n', 'and its weight');

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "settings": {"retention": 86400, "keep_runs": 1, "slots": 2},
    "kinds": {"b": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-03 10:00Z')$$, 'a retired');
SELECT tickq.forget_kind('a');
SELECT is((SELECT count(*) FROM tickq.run_count WHERE kind = 'a'), 0::bigint, 'forgotten, its counts go');

SELECT * FROM finish();
ROLLBACK;
