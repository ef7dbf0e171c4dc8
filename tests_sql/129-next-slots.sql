-- The next N slots of a schedule have one walker, tickq.next_slots (next_slot from each slot to the
-- next): tickq next and tickq schedule (tickq.schedule_slots) and tickq agent show
-- (tickq.agent_next_runs) list the same slots for the same schedule.
BEGIN;
SELECT plan(6);

SELECT results_eq($$SELECT * FROM tickq.next_slots(tickq.parse_schedule('x', '{"every": 900, "offset": 300}', 'UTC'),
    3, '2026-06-01 10:05Z')$$,
    $$VALUES ('2026-06-01 10:20Z'::timestamptz), ('2026-06-01 10:35Z'), ('2026-06-01 10:50Z')$$,
    'a cadence: the next three slots strictly after p_now, in order');
SELECT results_eq($$SELECT * FROM tickq.next_slots(tickq.parse_schedule('x', '{"at": "12:00", "days": [29],
    "months": ["feb"]}', 'UTC'), 3, '2026-06-01 10:00Z')$$,
    $$VALUES ('2028-02-29 12:00Z'::timestamptz), ('2032-02-29 12:00Z'), ('2036-02-29 12:00Z')$$,
    'a calendar: each slot from the one before (the 29th of February, leap years only)');
SELECT is_empty($$SELECT * FROM tickq.next_slots(tickq.parse_schedule('x', '{"every": 60}', 'UTC'), 0)$$,
    'a count below 1: none');

SELECT tickq.sync_registry('{"settings": {"timezone": "Europe/Paris"}, "kinds": {}}', '2026-06-01 10:00Z');
SELECT lives_ok($$SELECT tickq.save_agent('ag', '{"prompt": "p", "at": "07:00", "on": ["mon"]}', true,
    '2026-06-01 10:00Z')$$, 'an agent on Mondays at 07:00, Paris time');
SELECT results_eq($$SELECT a.run_at, a.local_time FROM tickq.agent_next_runs('ag', 2, '2026-06-01 10:00Z') AS a$$,
    $$VALUES ('2026-06-08 05:00Z'::timestamptz, '2026-06-08 07:00'::timestamp),
        ('2026-06-15 05:00Z', '2026-06-15 07:00')$$,
    'the agent''s next runs');
SELECT results_eq($$SELECT s.at, s.local_at FROM tickq.schedule_slots('ag', '{"at": "07:00", "on": ["mon"]}',
    'Europe/Paris', 2, '2026-06-01 10:00Z') AS s$$,
    $$SELECT a.run_at, a.local_time FROM tickq.agent_next_runs('ag', 2, '2026-06-01 10:00Z') AS a$$,
    'the same schedule as a registry entry: the same slots');

SELECT * FROM finish();
ROLLBACK;
