-- The restore of a copy (tickq.simulation_restore, sql/api/18_simulation_state.sql) takes the
-- due time of a kind waiting since the copy began for a slot before the restore's instant from
-- the due times at the end of the stretch copied (tickq.simulation_dues), moved on by the
-- copy's length, instead of working out its next slot: the same queue, and the entry read is
-- the one of that kind. An entry at or after the instant before which they are exact, or a
-- kind not waiting since the copy began (due before it), takes its next slot as before.
BEGIN;
SELECT plan(7);

-- three slots; b every 10 minutes at :02, e hourly at :50, g every two hours; a hourly at :00
-- holding its slot 20 minutes
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200},
        "b": {"command": ["x"], "every": 600, "offset": 120, "timeout": 60},
        "e": {"command": ["x"], "every": 3600, "offset": 3000, "timeout": 60},
        "g": {"command": ["x"], "every": 7200, "timeout": 60}
    }}', '2026-06-01 09:00Z');

SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 10:14:59.999999Z', NULL, '2026-06-01 10:00Z');
CREATE TEMP TABLE mark AS
SELECT m.*, tickq.simulation_dues() AS dues FROM tickq.simulation_mark('2026-06-01 10:15Z') AS m;
SELECT tickq.simulate_events('2026-06-01 12:40:59.999999Z', NULL, '2026-06-01 10:15Z');

SELECT is((SELECT m.dues FROM mark AS m),
    '["2026-06-01T10:00:00+00:00", "2026-06-01T10:12:00+00:00", "2026-06-01T10:50:00+00:00",
      "2026-06-01T12:00:00+00:00", "2026-06-02T00:00:00+00:00"]'::jsonb,
    'at 10:15 the due times of every kind (housekeeping''s last) in the order of their names');

CREATE TEMP VIEW queue AS
SELECT k.name, k.due_at, k.attempts, k.next_trigger, k.slot_at, k.first_slot_at, k.slots_covered, k.run_id,
    k.leased_by, k.leased_until
FROM tickq.job_kind AS k;
CREATE TEMP TABLE before AS SELECT * FROM queue;
CREATE FUNCTION pg_temp.back() RETURNS void
LANGUAGE sql AS $$
    UPDATE tickq.job_kind AS k SET due_at = b.due_at, attempts = b.attempts, next_trigger = b.next_trigger,
        slot_at = b.slot_at, first_slot_at = b.first_slot_at, slots_covered = b.slots_covered, run_id = b.run_id,
        leased_by = b.leased_by, leased_until = b.leased_until
    FROM before AS b WHERE k.name = b.name
$$;

-- Restored at 13:15 from the state at 10:15 as a copy begun at 12:41 would: first with every next
-- slot worked out, then with the due times at 10:15 three hours on.
SELECT tickq.simulation_restore('2026-06-01 13:15Z', m.state, m.ids) FROM mark AS m;
CREATE TEMP TABLE worked AS SELECT * FROM queue;
SELECT pg_temp.back();
SELECT tickq.simulation_restore('2026-06-01 13:15Z', m.state, m.ids, '2026-06-01 12:41Z', m.dues, '3 hours',
    'infinity') FROM mark AS m;
SELECT results_eq('SELECT * FROM queue ORDER BY name', 'SELECT * FROM worked ORDER BY name',
    'the queue restored from the due times at 10:15 is the one with every next slot worked out');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'e'), '2026-06-01 13:50Z'::timestamptz,
    'e waits for 13:50');

-- e's entry moved a minute on: read for e alone, where it is exact and e waited since the copy began.
CREATE TEMP TABLE moved AS SELECT jsonb_set(m.dues, '{2}', '"2026-06-01T10:51:00+00:00"') AS dues FROM mark AS m;
SELECT pg_temp.back();
SELECT tickq.simulation_restore('2026-06-01 13:15Z', m.state, m.ids, '2026-06-01 12:41Z', d.dues, '3 hours',
    'infinity') FROM mark AS m, moved AS d;
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'e'), '2026-06-01 13:51Z'::timestamptz,
    'e''s due time is its entry three hours on');
SELECT results_eq('SELECT * FROM queue WHERE name <> ''e'' ORDER BY name',
    'SELECT * FROM worked WHERE name <> ''e'' ORDER BY name', 'and no other kind reads it');

SELECT pg_temp.back();
SELECT tickq.simulation_restore('2026-06-01 13:15Z', m.state, m.ids, '2026-06-01 12:41Z', d.dues, '3 hours',
    '2026-06-01 10:51Z') FROM mark AS m, moved AS d;
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'e'), '2026-06-01 13:50Z'::timestamptz,
    'an entry not before the instant the entries are exact until is worked out again');

SELECT pg_temp.back();
SELECT tickq.simulation_restore('2026-06-01 13:15Z', m.state, m.ids, '2026-06-01 12:51Z', d.dues, '3 hours',
    'infinity') FROM mark AS m, moved AS d;
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'e'), '2026-06-01 13:50Z'::timestamptz,
    'so is a kind due before the copy began (e, due 12:50, for a copy begun at 12:51)');

SELECT * FROM finish();
ROLLBACK;
