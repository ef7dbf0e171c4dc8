-- explain_kind: one state per kind as of a moved clock, and what goes with it.
BEGIN;
SELECT plan(10);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "stale_after": 900},
    "kinds": {
        "hog": {"command": ["x"], "every": 3600, "timeout": 600, "priority": "urgent"},
        "late": {"command": ["x"], "every": 3600, "timeout": 60},
        "later": {"command": ["x"], "every": 3600, "timeout": 60, "priority": "low"},
        "off": {"command": ["x"], "every": 3600, "timeout": 60, "enabled": false},
        "drop": {"command": ["x"], "every": 3600, "timeout": 60, "irreversible": true},
        "held": {"command": ["x"], "every": 3600, "timeout": 60}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = CASE name
    WHEN 'tickq.housekeeping' THEN 'infinity'::timestamptz
    WHEN 'hog' THEN '2026-06-01 10:00Z' ELSE '2026-06-01 11:00Z'
END;
SELECT is(tickq.pause_kind('held', '2026-06-01 13:00Z', 'upstream down', 'ann@laptop', '2026-06-01 10:05Z'),
    '2026-06-01 13:00Z'::timestamptz, 'held paused');
SELECT is(tickq.explain_kind('late', '2026-06-01 10:30Z') ->> 'state', 'idle', 'not due yet: idle');
SELECT is(tickq.explain_kind('late', '2026-06-01 10:30Z') ->> 'next_due_at', '2026-06-01T11:00:00+00:00',
    'idle until its next slot');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'host:1', '2026-06-01 10:00Z')$$,
    $$VALUES ('hog')$$, 'hog holds the only slot');
SELECT results_eq($$SELECT e ->> 'state', e -> 'run' ->> 'dispatcher', (e -> 'run' ->> 'lease_expired')::boolean
    FROM unnest(ARRAY['2026-06-01 10:10Z', '2026-06-01 11:20Z']::timestamptz []) AS t (at),
        tickq.explain_kind('hog', t.at) AS e$$,
    $$VALUES ('running', 'host:1', false), ('running', 'host:1', true)$$,
    'running on its dispatcher: its lease live, then run out (the next claim marks it lost)');
SELECT results_eq($$SELECT e ->> 'state', (e ->> 'stale')::boolean, (e -> 'queue' ->> 'place')::integer,
        (e -> 'queue' ->> 'slots_free')::integer, e -> 'queue' -> 'holders' -> 0 ->> 'kind'
    FROM tickq.explain_kind('late', '2026-06-01 11:10Z') AS e$$,
    $$VALUES ('waiting', false, 1, 0, 'hog')$$, 'waiting, first in line, behind the run holding the slot');
SELECT results_eq($$SELECT (e ->> 'stale')::boolean, e -> 'queue' -> 'ahead', (e -> 'queue' ->> 'lane_place')::integer
    FROM tickq.explain_kind('later', '2026-06-01 11:20Z') AS e$$,
    $$VALUES (true, '["late"]'::jsonb, 1)$$, 'stale, second in the claim order, first in its lane');
SELECT is(tickq.explain_kind('off', '2026-06-01 11:20Z') ->> 'state', 'disabled', 'disabled');
SELECT is(tickq.explain_kind('drop', '2026-06-01 11:20Z') ->> 'state', 'unarmed', 'unarmed');
SELECT results_eq($$SELECT e ->> 'state', e -> 'pause' ->> 'by', e -> 'pause' ->> 'reason', e ->> 'next_due_at'
    FROM tickq.explain_kind('held', '2026-06-01 11:20Z') AS e$$,
    $$VALUES ('paused', 'ann@laptop', 'upstream down', '2026-06-01T13:00:00+00:00')$$,
    'paused: by whom, why, and due when it ends');

SELECT * FROM finish();
ROLLBACK;
