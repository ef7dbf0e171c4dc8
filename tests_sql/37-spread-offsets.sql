-- The offsets `tickq check --suggest` proposes: each movable kind, longest holder first, at the
-- offset whose ticks are least loaded, its own when that is as good.
BEGIN;
SELECT plan(6);

-- ticks of 5 minutes; the hourly housekeeping holds the hour's first tick; h1 and h2 hold three
-- ticks each at :00, where housekeeping runs; h3's own offset (:40) is free
-- three hourly kinds of three ticks each
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 3600},
    "kinds": {
        "h1": {"command": ["x"], "every": 3600, "timeout": 900},
        "h2": {"command": ["x"], "every": 3600, "timeout": 900},
        "h3": {"command": ["x"], "every": 3600, "offset": 2400, "timeout": 900}
    }}', '2026-06-01 09:00Z');
SELECT results_eq(
    $$SELECT kind, offset_seconds FROM tickq.spread_offsets(NULL, '2026-06-01 10:00Z') ORDER BY kind$$,
    $$VALUES ('h1', 300), ('h2', 1200)$$,
    'h1 moves past housekeeping to :05, h2 to the next free ticks (:20); h3 keeps its own offset');
SELECT results_eq(
    $$SELECT kind, offset_seconds FROM tickq.spread_offsets('{"h1": 30}', '2026-06-01 10:00Z') ORDER BY kind$$,
    $$VALUES ('h1', 1200), ('h2', 300)$$,
    'with h1 known to take 30 seconds, h2 holds the most and is placed first');

-- a kind at the tick beside an hourly one
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 3600},
    "kinds": {
        "h1": {"command": ["x"], "every": 3600, "offset": 300, "timeout": 900},
        "fast": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 09:00Z');
SELECT is_empty(
    $$SELECT * FROM tickq.spread_offsets(NULL, '2026-06-01 10:00Z')$$,
    'a cadence at the tick is never moved, and a kind already where it is best keeps its offset');

-- the pieces it stands on
SELECT is(
    tickq.held_ticks('2026-06-01 00:50Z', '1 hour', 3, '1 hour', '5 minutes', '2026-06-01 00:00Z'),
    ARRAY[10, 11, 0],
    'a run due at :50 holds the ticks :50, :55 and, wrapping round the period, :00');
SELECT is(
    tickq.held_ticks('2026-06-01 00:22Z', '30 minutes', 1, '1 hour', '5 minutes', '2026-06-01 00:00Z'),
    ARRAY[5, 11],
    'a slot between ticks is claimed at the next tick; every slot of the period counts');
SELECT results_eq(
    $$SELECT * FROM tickq.calendar_slots_in(
        (NULL, NULL, '{01:30}', NULL, NULL, NULL, NULL, 'Europe/London')::tickq.schedule, '2026-03-30 12:00Z',
        '2026-03-28 00:00Z')$$,
    $$VALUES ('2026-03-28 01:30Z'::timestamptz), ('2026-03-29 01:30Z'), ('2026-03-30 00:30Z')$$,
    'calendar slots come from next_slot: 01:30, in the spring-forward gap, runs one gap later (02:30 BST)');

SELECT finish();
ROLLBACK;
