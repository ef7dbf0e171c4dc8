-- tickq.expected_duration with tickq.observed_durations: the history of another queue (`tickq
-- check` judges a registry in a scratch database with the user's queue's history) stands in for
-- this database's own, kind by kind, and is held to the kind's timeout as the own history is.
BEGIN;
SELECT plan(4);

-- the kinds
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 300},
    "kinds": {
        "seen": {"command": ["x"], "every": 300, "timeout": 600},
        "capped": {"command": ["x"], "every": 300, "timeout": 120},
        "own": {"command": ["x"], "every": 300, "timeout": 600},
        "unseen": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:00Z');

-- "own" has a history of its own: six runs of 40 seconds
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, finished_at, outcome, duration)
SELECT 'own', 1, 'schedule', 'd', '2026-06-01 09:00Z', '2026-06-01 09:00:40Z', 'ok', '40 seconds'
FROM generate_series(1, 6);

SELECT results_eq(
    $$SELECT kind, expected_duration, duration_source FROM tickq.capacity_at('2026-06-01 10:00Z')
      WHERE kind <> 'tickq.housekeeping' ORDER BY kind$$,
    $$VALUES ('capped', '2 minutes'::interval, 'timeout'), ('own', '40 seconds', 'p95 of 6 runs'),
             ('seen', '10 minutes', 'timeout'), ('unseen', '1 minute', 'timeout')$$,
    'without the setting: the database''s own history'
);

SELECT set_config('tickq.observed_durations',
    '{"seen": ["12345678 microseconds", "p95 of 20 runs"], "capped": ["5 minutes", "p95 of 7 runs"],
      "own": ["90 seconds", "p95 of 9 runs"]}', true);
SELECT results_eq(
    $$SELECT kind, expected_duration, duration_source FROM tickq.capacity_at('2026-06-01 10:00Z')
      WHERE kind <> 'tickq.housekeeping' ORDER BY kind$$,
    $$VALUES ('capped', '2 minutes'::interval, 'p95 of 7 runs'), ('own', '90 seconds', 'p95 of 9 runs'),
             ('seen', '12.345678 seconds', 'p95 of 20 runs'), ('unseen', '1 minute', 'timeout')$$,
    'with it: the history given, to the microsecond, never above the timeout; a kind it does not '
    || 'name keeps its own (none: the timeout)'
);
SELECT is((SELECT slot_share FROM tickq.capacity_at('2026-06-01 10:00Z') WHERE kind = 'seen'), 0.0412,
    'the share follows the duration given (12.35 s of a 300 s tick)');

SELECT set_config('tickq.observed_durations', '', true);
SELECT is((SELECT duration_source FROM tickq.capacity_at('2026-06-01 10:00Z') WHERE kind = 'own'),
    'p95 of 6 runs', 'an empty setting is no setting');

SELECT * FROM finish();
ROLLBACK;
