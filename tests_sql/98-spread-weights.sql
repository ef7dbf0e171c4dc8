-- tickq.spread_times counts a run's load by its weight (the slot rows it holds), as
-- tickq.spread_offsets does: a tick where a kind of weight 3 runs is fuller than one where a
-- kind of weight 1 runs.
BEGIN;
SELECT plan(2);

-- Every five-minute tick is held: 'heavy' (weight 3) at :00, :10, ..., 'light' at :05, :15, ...
-- 'month_end' runs at 00:10 on the month's last day, on a tick of 'heavy'.
SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900, "slots": 4,
        "housekeeping_every": 86400},
    "kinds": {"heavy": {"command": ["x"], "cron": "*/10 * * * *", "weight": 3, "timeout": 60},
        "light": {"command": ["x"], "cron": "5-59/10 * * * *", "timeout": 60},
        "month_end": {"command": ["x"], "at": "00:10", "days": [-1], "timeout": 60}}}',
    '2026-06-10 13:17Z');
SELECT results_eq($$SELECT kind, at_times FROM tickq.spread_times(NULL, '2026-06-10 13:17Z')$$,
    $$VALUES ('month_end', ARRAY['00:15'])$$,
    'moved to the next tick, which holds one slot row where its own holds three');

UPDATE tickq.job_kind SET weight = 1 WHERE name = 'heavy';
SELECT is_empty($$SELECT * FROM tickq.spread_times(NULL, '2026-06-10 13:17Z')$$,
    'with every weight 1 its own tick is as good as any, and it stays');

SELECT * FROM finish();
ROLLBACK;
