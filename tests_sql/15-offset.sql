-- Offsets: an every cadence shifted off its clock-aligned slots, through the schedule
-- arithmetic, sync, claims, reports, the capacity view and the simulator.
BEGIN;
SELECT plan(20);

-- schedule arithmetic
SELECT is(tickq.next_slot(('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:07Z'),
    '2026-06-01 10:20Z'::timestamptz, 'hourly offset 20m: from 10:07 the next slot is 10:20');
SELECT is(tickq.next_slot(('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:20Z'),
    '2026-06-01 11:20Z'::timestamptz, 'a slot exactly at p_after is not after it: 11:20');
SELECT is(tickq.next_slot(('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:25Z'),
    '2026-06-01 11:20Z'::timestamptz, 'from 10:25 the next slot is 11:20');
SELECT is(tickq.next_slot(('1 day', '6 hours', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:00Z'),
    '2026-06-02 06:00Z'::timestamptz, 'daily offset 6h lands on 06:00 UTC');
SELECT is(tickq.slots_between(('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:20Z', '2026-06-01 12:19Z'), 1, 'slots in (10:20, 12:19]: 11:20 only');
SELECT is(tickq.slots_between(('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:20Z', '2026-06-01 12:20Z'), 2, 'slots in (10:20, 12:20]: 11:20 and 12:20');
SELECT is(tickq.describe_schedule(('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule),
    'every 1h offset 20m', 'an offset reads in the schedule line');

-- sync: stored, canonical, validated
-- a registry with offsets syncs
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 900},
        "b": {"command": ["x"], "every": 3600, "offset": 1800, "timeout": 900},
        "z": {"command": ["x"], "every": 3600, "offset": 0, "timeout": 60}
    }}', '2026-06-01 10:00Z');
SELECT results_eq($$SELECT name, every_offset FROM tickq.job_kind WHERE name IN ('a', 'b', 'z') ORDER BY name$$,
    $$VALUES ('a', NULL::interval), ('b', '30 minutes'::interval), ('z', NULL)$$,
    'offsets are stored; no offset and offset 0 are the same schedule (NULL)');
SELECT is((SELECT tickq.registry_entry(k) ->> 'offset' FROM tickq.job_kind AS k WHERE k.name = 'b'), '1800',
    'the registry entry carries the offset in seconds');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {
        "a": {"command": ["x"], "every": 3600, "offset": 3600, "timeout": 60}}}', '2026-06-01 10:00Z')$$,
    'TQ002', NULL, 'an offset of a whole cadence is refused');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {
        "a": {"command": ["x"], "at": "06:00", "offset": 60, "timeout": 60}}}', '2026-06-01 10:00Z')$$,
    'TQ002', NULL, 'a calendar schedule takes no offset');
SELECT throws_ok($$UPDATE tickq.job_kind SET every_offset = '2 hours' WHERE name = 'b'$$,
    '23514', NULL, 'the table refuses an offset outside the cadence, written by hand');
SELECT is((SELECT tickq.describe_schedule(tickq.schedule_of(k)) FROM tickq.job_kind AS k WHERE k.name = 'b'),
    'every 1h offset 30m', 'capacity and status show it');
SELECT is((SELECT schedule FROM tickq.capacity_at('2026-06-01 10:00Z') WHERE kind = 'b'),
    'every 1h offset 30m', 'the capacity table shows the offset');

-- claims and reports: after a run the kind is due at its next shifted slot
SELECT is((SELECT array_agg(kind ORDER BY kind) FROM tickq.claim_jobs(1, 'd', '2026-06-01 10:00Z')), '{a}',
    'one slot: a runs first');
SELECT is((SELECT next_due_at FROM tickq.report_run(
        (SELECT run_id FROM tickq.job_kind WHERE name = 'a'), 'd', 'ok', 0, NULL, NULL, '2026-06-01 10:15Z')),
    '2026-06-01 11:00Z'::timestamptz, 'a: next slot on the hour');
SELECT is((SELECT array_agg(kind) FROM tickq.claim_jobs(1, 'd', '2026-06-01 11:25Z')), '{b}',
    'at 11:25 b, due since 10:00, goes first');
SELECT is((SELECT slots::int FROM tickq.job_run WHERE kind = 'b'), 2,
    'b, due since 10:00 and claimed at 11:25, stands for 10:00 and its 10:30 slot (11:00 is not one)');
SELECT is((SELECT next_due_at FROM tickq.report_run(
        (SELECT run_id FROM tickq.job_kind WHERE name = 'b'), 'd', 'ok', 0, NULL, NULL, '2026-06-01 11:40Z')),
    '2026-06-01 12:30Z'::timestamptz, 'b: next slot at half past');

-- the simulator: two hourly kinds of 15 minutes in one slot; spread by half an hour, none waits
UPDATE tickq.job_kind SET due_at = '2026-06-02 00:00Z' WHERE name = 'a';
UPDATE tickq.job_kind SET due_at = '2026-06-02 00:30Z' WHERE name = 'b';
UPDATE tickq.job_kind SET enabled = false WHERE name IN ('z', 'tickq.housekeeping');
SELECT is((SELECT max(longest_wait) FROM tickq.simulate(6, NULL, '2026-06-02 00:00Z')), '0'::interval,
    'the simulator honours offsets: spread kinds never wait');

SELECT * FROM finish();
ROLLBACK;
