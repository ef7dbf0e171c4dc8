-- claim_jobs and claim_manual: the slot limit, order, one lease per kind, lease expiry, aging.
BEGIN;
SELECT plan(23);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "stale_after": 900},
    "kinds": {
        "u1": {"command": ["x"], "every": 300, "timeout": 60, "priority": "urgent"},
        "u2": {"command": ["x"], "every": 300, "timeout": 60, "priority": "urgent"},
        "h1": {"command": ["x"], "every": 300, "timeout": 60, "priority": "high"},
        "n1": {"command": ["x"], "every": 300, "timeout": 60},
        "l1": {"command": ["x"], "every": 300, "timeout": 60, "priority": "low"},
        "off": {"command": ["x"], "every": 300, "timeout": 60, "enabled": false}
    }}', '2026-06-01 10:00Z');
-- The built-in housekeeping kind is tested in its own file; here it waits out of the way.
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
-- make due order explicit
UPDATE tickq.job_kind
SET due_at = '2026-06-01 10:00Z'::timestamptz + (CASE name WHEN 'u2' THEN 1 ELSE 2 END) * interval '1 second'
WHERE name NOT LIKE 'tickq.%';

SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'd1', '2026-06-01 09:59Z')$$, 'nothing is due before its time');
SELECT results_eq($$SELECT kind, attempt, run_trigger::text, leased_until FROM tickq.claim_jobs(2, 'd1',
    '2026-06-01 10:01Z')$$,
    $$VALUES ('u2', 1, 'schedule', '2026-06-01 10:07Z'::timestamptz), ('u1', 1, 'schedule',
        '2026-06-01 10:07Z'::timestamptz)$$,
    'priority first, then the oldest due time; the lease is longest timeout + 5m');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd2', '2026-06-01 10:01Z')$$,
    $$VALUES ('h1')$$, 'a claim never takes more than the free slots (3 - 2 = 1)');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(5, 'd3', '2026-06-01 10:01Z')$$, 'all slots leased: nothing more');
SELECT is((SELECT count(*)::int FROM tickq.job_kind WHERE run_id IS NOT NULL), 3, 'three live leases');
SELECT is((SELECT count(*)::int FROM tickq.job_run WHERE outcome = 'running'), 3, 'three running runs');
SELECT results_eq($$SELECT run_id, leased_by FROM tickq.job_kind WHERE name = 'u1'$$,
    $$SELECT id, dispatcher FROM tickq.job_run WHERE kind = 'u1'$$, 'the kind points at its live run');

-- manual runs are counted against the slots
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('n1', 'me', NULL, '2026-06-01 10:01Z')$$, 'TQ005',
    'all 3 slots are in use', 'a manual run needs a free slot');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('u1', 'me', NULL, '2026-06-01 10:01Z')$$, 'TQ006', NULL,
    'a kind already running cannot be run by hand');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('nope', 'me', NULL, '2026-06-01 10:01Z')$$, 'TQ003',
    'no kind "nope" in the registry',
    'an unknown kind is refused');

-- lease expiry: the runs become lost and the kinds claimable again
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'd4', '2026-06-01 10:06:59Z')$$, 'leases hold until they expire');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd4', '2026-06-01 10:08Z')$$,
    $$VALUES ('n1'), ('l1')$$,
    'after expiry the slots are free again for the kinds still due'
);
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'u1'), '2026-06-01 10:10Z'::timestamptz,
    'a lost run with no retries left moves its kind to the next slot');
SELECT is((SELECT count(*)::int FROM tickq.job_run WHERE outcome = 'lost'), 3, 'the expired runs are lost');
SELECT ok((SELECT bool_and(output_tail LIKE '%lease expired%without a report from dispatcher d%')
    FROM tickq.job_run WHERE outcome = 'lost'), 'a lost run says why in its output tail');
SELECT is((SELECT failure_streak::integer FROM tickq.job_kind WHERE name = 'u1'), 1, 'a lost run counts as a failure');

-- disabled kinds are never claimed, but can be run by hand
UPDATE tickq.job_kind SET run_id = NULL, leased_by = NULL, leased_until = NULL;
UPDATE tickq.slot SET run_id = NULL;
UPDATE tickq.job_run SET outcome = 'failed', finished_at = '2026-06-01 10:09Z' WHERE outcome = 'running';
UPDATE tickq.job_kind SET due_at = '2099-01-01Z' WHERE name <> 'off';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name = 'off';
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'd5', '2026-06-01 10:10Z')$$, 'a disabled kind is not claimed');
SELECT results_eq(
    $$SELECT kind, run_trigger::text, attempt FROM tickq.claim_manual('off', 'me', NULL, '2026-06-01 10:10Z')$$,
    $$VALUES ('off', 'manual', 1)$$, 'a person can run a disabled kind by hand');

-- aging: a due kind left longer than stale_after goes before any fresher kind of any priority
UPDATE tickq.job_kind SET run_id = NULL, leased_by = NULL, leased_until = NULL;
UPDATE tickq.slot SET run_id = NULL;
UPDATE tickq.job_run SET outcome = 'ok', finished_at = '2026-06-01 10:11Z' WHERE outcome = 'running';
UPDATE tickq.job_kind SET due_at = '2026-06-01 11:00Z', attempts = 0, next_trigger = 'schedule'
WHERE name NOT LIKE 'tickq.%';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:40Z' WHERE name = 'l1';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:50Z' WHERE name = 'n1';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd6', '2026-06-01 11:00Z')$$,
    $$VALUES ('l1')$$, 'a low kind waiting 20 minutes beats fresh urgent kinds');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd6', '2026-06-01 11:00Z')$$,
    $$VALUES ('u1')$$, 'a kind waiting 10 minutes (not yet stale) still goes by priority');

-- a late run records how many slots it stands for
UPDATE tickq.job_kind SET due_at = '2099-01-01Z' WHERE run_id IS NULL;
UPDATE tickq.job_kind SET due_at = '2026-06-01 11:00Z' WHERE name = 'h1';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd7', '2026-06-01 12:00Z')$$, $$VALUES ('h1')$$,
    'the late kind is claimed once');
SELECT results_eq($$SELECT slots::integer FROM tickq.job_run WHERE kind = 'h1' AND outcome = 'running'$$,
    $$VALUES (13)$$, 'an hour late on a 5m cadence: one run standing for 13 slots');
SELECT throws_ok($$SELECT * FROM tickq.claim_jobs(-1, 'd7')$$, '22023', NULL, 'a negative limit is refused');

SELECT * FROM finish();
ROLLBACK;
