-- Housekeeping: pruning by age with a floor per kind, lost leases, and its built-in kind.
BEGIN;
SELECT plan(8);

SELECT * FROM tickq.sync_registry('{
    "settings": {"retention": 2592000, "keep_runs": 3, "housekeeping_every": 900},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 60},
        "b": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:00Z');
SELECT results_eq($$SELECT every, timeout, enabled,
    registry -> 'command' FROM tickq.job_kind WHERE name = 'tickq.housekeeping'$$,
    $$VALUES ('15 minutes'::interval, '1 minute'::interval, true, '["tickq", "housekeeping"]'::jsonb)$$,
    'the built-in housekeeping kind is in the queue like any kind, every 15 minutes');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"tickq.mine": {"command": ["x"],
        "every": 60, "timeout": 5}}}')$$,
    'TQ002', 'registry: kind "tickq.mine", key "name": names starting with "tickq." are reserved for built-in kinds',
    'built-in names are reserved');

-- a: 10 runs from 60 days ago and 2 from today; b: 2 old runs only
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, finished_at, outcome)
SELECT 'a', 1, 'schedule', 'd', t, t, 'ok'
FROM generate_series(1, 10) AS g (i), LATERAL (SELECT '2026-04-01Z'::timestamptz + g.i * interval '1 hour') AS x (t);
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, finished_at, outcome)
VALUES ('a', 1, 'schedule', 'd', '2026-06-01 09:00Z', '2026-06-01 09:01Z', 'ok'),
       ('a', 1, 'schedule', 'd', '2026-06-01 09:30Z', '2026-06-01 09:31Z', 'failed'),
       ('b', 1, 'schedule', 'd', '2026-04-01Z', '2026-04-01Z', 'ok'),
       ('b', 1, 'schedule', 'd', '2026-04-02Z', '2026-04-02Z', 'ok');
INSERT INTO tickq.drift (kind, field, stored_value, registry_value, detected_at)
SELECT 'a', 'retries', '1', '2', '2026-03-01Z'::timestamptz + g.i * interval '1 hour' FROM generate_series(1,
    5) AS g (i);
-- a live lease that expired an hour ago
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name <> 'b';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'gone', '2026-06-01 10:00Z')$$, $$VALUES ('b')$$, 'b claimed');
UPDATE tickq.job_kind SET leased_until = '2026-06-01 10:30Z' WHERE name = 'b';

SELECT results_eq($$SELECT * FROM tickq.housekeeping(50000, '2026-06-01 11:30Z')$$,
    $$VALUES (1, 9, 2, 0)$$, 'one lease lost; 9 old runs of a and 2 old drift rows pruned');
SELECT results_eq($$SELECT finished_at FROM tickq.job_run WHERE kind = 'a' ORDER BY id$$,
    $$VALUES ('2026-04-01 10:00Z'::timestamptz), ('2026-06-01 09:01Z'), ('2026-06-01 09:31Z')$$,
    'a keeps its latest 3 runs (keep_runs), one of them older than the retention');
SELECT is((SELECT count(*)::int FROM tickq.job_run WHERE kind = 'b'), 3,
    'b: its 2 old runs and its lost run stay (floor of 3)');
SELECT is((SELECT count(*)::int FROM tickq.drift WHERE kind = 'a'), 3, 'drift keeps the latest 3 of the kind');
SELECT is((SELECT outcome::text FROM tickq.job_run WHERE kind = 'b' ORDER BY id DESC LIMIT 1), 'lost',
    'the expired lease became a lost run');

SELECT * FROM finish();
ROLLBACK;
