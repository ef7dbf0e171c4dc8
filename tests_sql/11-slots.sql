-- The slot limit as rows: one row per slot, a run in each busy one, resizing by sync.
BEGIN;
SELECT plan(10);

-- four kinds, three slots
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 60},
        "b": {"command": ["x"], "every": 300, "timeout": 60},
        "c": {"command": ["x"], "every": 300, "timeout": 60},
        "d": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
SELECT results_eq($$SELECT n::integer, run_id FROM tickq.slot ORDER BY n$$,
    $$VALUES (1, NULL::bigint), (2, NULL), (3, NULL)$$, 'one free row per slot');

SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:01Z')$$,
    $$VALUES ('a'), ('b'), ('c')$$, 'three claimed');
SELECT results_eq(
    $$SELECT sl.n::integer, k.name FROM tickq.slot AS sl
      JOIN tickq.job_kind AS k ON k.run_id = sl.run_id ORDER BY sl.n$$,
    $$VALUES (1, 'a'), (2, 'b'), (3, 'c')$$, 'each live run holds a slot of its own');
SELECT is_empty(
    $$SELECT sl.n::integer FROM tickq.slot AS sl
      LEFT JOIN tickq.job_kind AS k ON sl.run_id = k.run_id
      LEFT JOIN tickq.job_run AS r ON sl.run_id = r.id
      WHERE sl.leased_until IS DISTINCT FROM k.leased_until OR r.slot_row IS DISTINCT FROM sl.n$$,
    'a busy slot carries its kind''s lease expiry, and the run records its slot');

-- shrinking the limit never kills running work, and claims stay under the new limit
-- the limit goes down to one
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 60},
        "b": {"command": ["x"], "every": 300, "timeout": 60},
        "c": {"command": ["x"], "every": 300, "timeout": 60},
        "d": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:02Z');
SELECT is((SELECT count(*)::int FROM tickq.slot), 3, 'busy slots past the limit stay until their runs end');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'c'), 'd1', 'ok', 0, NULL, NULL,
    '2026-06-01 10:03Z');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'a'), 'd1', 'ok', 0, NULL, NULL,
    '2026-06-01 10:03Z');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:04Z')$$,
    'slot 1 is free, but b still runs in slot 2: one live lease already fills the new limit');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('d', 'me', NULL, '2026-06-01 10:04Z')$$, 'TQ005', NULL,
    'a manual run too');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'b'), 'd1', 'ok', 0, NULL, NULL,
    '2026-06-01 10:05Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:06Z')$$, $$VALUES ('d')$$,
    'once b ends, one claim fits the new limit');
-- the next sync
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 60},
        "b": {"command": ["x"], "every": 300, "timeout": 60},
        "c": {"command": ["x"], "every": 300, "timeout": 60},
        "d": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:07Z');
SELECT results_eq($$SELECT n::integer FROM tickq.slot$$, $$VALUES (1)$$, 'drops the free slots past the limit');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'd'), 'd1', 'ok', 0, NULL, NULL,
    '2026-06-01 10:08Z');
SELECT results_eq($$SELECT n::integer, run_id, leased_until FROM tickq.slot$$,
    $$VALUES (1, NULL::bigint, NULL::timestamptz)$$, 'a report frees the slot and its lease expiry');

SELECT * FROM finish();
ROLLBACK;
