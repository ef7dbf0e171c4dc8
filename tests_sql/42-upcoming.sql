-- Upcoming lists only runs that will happen: an unarmed irreversible kind and a paused kind are
-- held (shown once, with why, after the timed rows), a pause with an end starts the kind's runs
-- there, agents' kinds are listed like any kind, and every row says how many runs the window
-- holds in all, so a list cut at its limit can say how many more. The page's waits skip a
-- paused kind.
BEGIN;
SELECT plan(10);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900},
    "kinds": {
        "every5": {"command": ["x"], "every": 300, "timeout": 60},
        "payout": {"command": ["x"], "every": 3600, "timeout": 60, "irreversible": true},
        "held": {"command": ["x"], "every": 3600, "timeout": 60},
        "later": {"command": ["x"], "every": 3600, "timeout": 60}
    },
    "agents": {"priority": "low"}}', '2026-03-28 00:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
-- an agent saved
SELECT tickq.save_agent('brief', '{"prompt": "x", "every": 3600}', true, '2026-03-28 00:00Z');
SELECT tickq.pause_kind('held', 'infinity', 'maintenance', 'ana', '2026-03-28 00:00Z');
SELECT tickq.pause_kind('later', '2026-03-28 02:30Z', NULL, NULL, '2026-03-28 00:00Z');

SELECT is_empty(
    $$SELECT FROM tickq.upcoming_at(24, 500, '2026-03-28 00:10Z')
      WHERE kind IN ('payout', 'held') AND due_at IS NOT NULL$$,
    'an unarmed irreversible kind and a kind paused until resumed have no run listed');
SELECT results_eq(
    $$SELECT kind, held FROM tickq.upcoming_at(24, 500, '2026-03-28 00:10Z') WHERE held IS NOT NULL
      AND due_at IS NULL ORDER BY kind$$,
    $$VALUES ('held', 'paused'), ('payout', 'unarmed')$$,
    'each held kind is one row saying why, with no due time');
SELECT results_eq(
    $$SELECT due_at, held, paused_until FROM tickq.upcoming_at(24, 500, '2026-03-28 00:10Z')
      WHERE kind = 'later' ORDER BY due_at LIMIT 2$$,
    $$VALUES ('2026-03-28 02:30Z'::timestamptz, 'paused', '2026-03-28 02:30Z'::timestamptz),
             ('2026-03-28 03:00Z'::timestamptz, NULL, NULL)$$,
    'a kind paused until 02:30 runs first when the pause ends, then on its schedule');
SELECT ok(
    (SELECT count(*) > 0 FROM tickq.upcoming_at(24, 500, '2026-03-28 00:10Z') WHERE kind = 'agent.brief'),
    'an agent''s next runs are listed');
SELECT is(
    (SELECT min(total) FROM tickq.upcoming_at(24, 500, '2026-03-28 00:10Z')),
    (SELECT count(*)::integer FROM tickq.upcoming_at(24, 500, '2026-03-28 00:10Z') WHERE due_at IS NOT NULL),
    'total counts the runs in the window');
SELECT results_eq(
    $$SELECT kind, count(*)::integer FROM tickq.upcoming_at(24, 5, '2026-03-28 00:10Z')
      WHERE due_at IS NOT NULL GROUP BY kind ORDER BY kind$$,
    $$VALUES ('agent.brief', 1), ('every5', 4), ('later', 1)$$,
    'the limit cuts the timed rows, but each kind''s next run is listed past it');
SELECT ok(
    (SELECT bool_and(total > 5) FROM tickq.upcoming_at(24, 5, '2026-03-28 00:10Z')),
    'a cut list still says how many runs the window holds');

SELECT is_empty(
    $$SELECT FROM tickq.report_waiting_at('2026-03-28 01:00Z') WHERE kind IN ('held', 'later', 'payout')$$,
    'a paused kind and an unarmed kind are not drawn as waiting (nor stale)');

-- 'later' was due at 00:00, paused until 02:30 and claimed at 02:35: it waited 5 minutes for a
-- slot, not 2h35, and never went stale.
SELECT c.run_id AS later_run FROM tickq.claim_manual('later', 'd1', NULL, '2026-03-28 02:35Z') AS c \gset
UPDATE tickq.job_run SET run_trigger = 'schedule', due_at = '2026-03-28 00:00Z' WHERE id = :later_run;
SELECT tickq.report_run(:later_run, 'd1', 'ok', 0, '', NULL, '2026-03-28 02:36Z');
SELECT is(
    (SELECT longest_wait FROM tickq.report_timeline_at(24, '2026-03-28 03:00Z') WHERE kind = 'later'),
    '5 minutes'::interval, 'a run due during a pause waited from the pause''s end');
SELECT is(
    (SELECT stale_at FROM tickq.report_timeline_at(24, '2026-03-28 03:00Z') WHERE kind = 'later'),
    NULL, 'so it is not drawn stale');

SELECT * FROM finish();
ROLLBACK;
