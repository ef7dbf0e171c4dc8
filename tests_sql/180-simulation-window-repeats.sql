-- A window that repeats one simulated before it in the same database (sql/api/16_worst_case.sql:
-- tickq.simulation_window_repeats, tickq.simulation_merge_repeat): check's month ends, a quarter
-- of a year apart, come again slot for slot, and `check` takes the later one's report from the
-- earlier one's, shifted, instead of simulating it again. The shifted report must be the one
-- simulating gives, waits and when they began included.
BEGIN;
SELECT plan(8);

-- One slot; a (hourly at :00) holds it 20 minutes, so b (hourly at :05) waits 15 minutes each
-- hour; c runs at 09:30 on weekdays only.
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "cron": "0 * * * *", "timeout": 1200},
        "b": {"command": ["x"], "cron": "5 * * * *", "timeout": 300},
        "c": {"command": ["x"], "cron": "30 9 * * mon-fri", "timeout": 60}
    }}', '2026-05-31 09:00Z');

-- Window 1: Monday 2026-06-01, 09:00 through 11:59:59.999999 (c runs at 09:30).
SELECT tickq.simulation_start('2026-06-01 09:00Z');
SELECT tickq.simulate_events('2026-06-01 11:59:59.999999Z', NULL, '2026-06-01 09:00Z');
CREATE TEMP TABLE report AS
SELECT 1 AS n, tickq.simulation_merge(NULL, 1, '2026-06-01 11:59:59.999999Z', '2026-06-01 09:00Z') AS worst;

SELECT ok(EXISTS (SELECT FROM tickq.simulation_worst((SELECT r.worst FROM report AS r WHERE r.n = 1)) AS w
        WHERE w.kind = 'b' AND w.longest_wait = '15 minutes' AND w.worst_due_at IS NOT NULL),
    'b waits for a in window 1');
SELECT ok(tickq.simulation_window_repeats('2026-06-01 09:00Z', '2026-06-01 11:59:59.999999Z', '24 hours'),
    'the same hours of Tuesday repeat Monday''s');
SELECT ok(NOT tickq.simulation_window_repeats('2026-06-01 09:00Z', '2026-06-01 11:59:59.999999Z', '120 hours'),
    'those of Saturday do not: c does not run on Saturdays');

-- Window 2: Tuesday, simulated in the same database.
SELECT tickq.simulation_start('2026-06-02 09:00Z');
SELECT tickq.simulate_events('2026-06-02 11:59:59.999999Z', NULL, '2026-06-02 09:00Z');
INSERT INTO report
SELECT 2, tickq.simulation_merge(NULL, 2, '2026-06-02 11:59:59.999999Z', '2026-06-02 09:00Z');

SELECT results_eq(
    $$SELECT * FROM tickq.simulation_worst(tickq.simulation_merge_repeat(NULL, 2,
        (SELECT r.worst FROM report AS r WHERE r.n = 1), '24 hours'))$$,
    $$SELECT * FROM tickq.simulation_worst((SELECT r.worst FROM report AS r WHERE r.n = 2))$$,
    'window 1''s report shifted a day is window 2''s: runs, waits, when they began, the window');
SELECT is(
    tickq.simulation_fold((SELECT r.worst FROM report AS r WHERE r.n = 1),
        tickq.simulation_merge_repeat(NULL, 2, (SELECT r.worst FROM report AS r WHERE r.n = 1), '24 hours')),
    tickq.simulation_fold((SELECT r.worst FROM report AS r WHERE r.n = 1),
        (SELECT r.worst FROM report AS r WHERE r.n = 2)),
    'and folded after window 1 it gives what window 2 simulated gives');

-- An irreversible kind: the window that arms it (a manual run at its start) has a run the later
-- one has not; one armed before the window changes nothing.
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "cron": "0 * * * *", "timeout": 1200, "irreversible": true},
        "b": {"command": ["x"], "cron": "5 * * * *", "timeout": 300},
        "c": {"command": ["x"], "cron": "30 9 * * mon-fri", "timeout": 60}
    }}', '2026-05-31 09:00Z');
SELECT ok(NOT tickq.simulation_window_repeats('2026-06-01 09:00Z', '2026-06-01 11:59:59.999999Z', '24 hours'),
    'not with an irreversible kind not armed yet');
SELECT tickq.simulation_arm('2026-06-01 09:00Z');
SELECT ok(NOT tickq.simulation_window_repeats('2026-06-01 09:00Z', '2026-06-01 11:59:59.999999Z', '24 hours'),
    'nor armed at the window''s start (its manual run is in that window)');
SELECT ok(tickq.simulation_window_repeats('2026-06-01 10:00Z', '2026-06-01 11:59:59.999999Z', '24 hours'),
    'but where it was armed before the window');

SELECT * FROM finish();
ROLLBACK;
