-- The restore of a copy (tickq.simulation_restore, sql/api/18_simulation_state.sql) writes each
-- kind once: a kind the state names takes the state's due time, tries, trigger, slots and lease
-- without its next slot being worked out first. The queue it leaves is the one of the restore
-- that gave every kind due before the instant its next slot, then wrote the kinds the state
-- names over it (kept here as pg_temp.restore_twice), column for column.
BEGIN;
SELECT plan(5);

-- one slot; a (high, hourly at :00) holds it 20 minutes, b (hourly at :10) and c (hourly at
-- :05), d (every 10 minutes) and g (every two hours) wait behind it; e (hourly at :50) waits
-- for its slot
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200, "priority": "high"},
        "b": {"command": ["x"], "every": 3600, "offset": 600, "timeout": 300, "priority": "low"},
        "c": {"command": ["x"], "every": 3600, "offset": 300, "timeout": 300, "priority": "low"},
        "d": {"command": ["x"], "every": 600, "offset": 120, "timeout": 60},
        "e": {"command": ["x"], "every": 3600, "offset": 3000, "timeout": 60},
        "g": {"command": ["x"], "every": 7200, "timeout": 60}
    }}', '2026-06-01 09:00Z');

CREATE FUNCTION pg_temp.restore_twice(p_at timestamptz, p_state jsonb, p_ids jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tickq.job_kind AS k SET
        run_id = NULL, leased_by = NULL, leased_until = NULL, attempts = 0, next_trigger = 'schedule',
        due_at = coalesce(tickq.next_slot(tickq.schedule_of(k), p_at - interval '1 microsecond'),
            p_at + interval '1 day')
    WHERE k.enabled AND (k.due_at < p_at OR k.run_id IS NOT NULL OR k.leased_by IS NOT NULL OR k.attempts <> 0
        OR k.next_trigger <> 'schedule');
    UPDATE tickq.job_kind AS k SET
        due_at = p_at + make_interval(secs => (e.value ->> 1)::double precision),
        attempts = (e.value ->> 2)::integer,
        next_trigger = (e.value ->> 3)::tickq.run_trigger,
        slot_at = CASE WHEN e.value -> 4 <> 'null' THEN p_at + make_interval(secs => (e.value -> 4 ->> 0)::double precision)
            ELSE k.slot_at END,
        first_slot_at = CASE WHEN e.value -> 4 <> 'null'
            THEN p_at + make_interval(secs => (e.value -> 4 ->> 1)::double precision) ELSE k.first_slot_at END,
        slots_covered = CASE WHEN e.value -> 4 <> 'null' THEN (e.value -> 4 ->> 2)::integer ELSE k.slots_covered END,
        run_id = (p_ids ->> (e.value ->> 0))::bigint,
        leased_by = e.value -> 5 ->> 0,
        leased_until = p_at + make_interval(secs => (e.value -> 5 ->> 1)::double precision)
    FROM jsonb_array_elements(p_state -> 'kinds') AS e (value)
    WHERE k.name = e.value ->> 0;
END
$$;

SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 10:14:59.999999Z', NULL, '2026-06-01 10:00Z');
CREATE TEMP TABLE mark AS SELECT * FROM tickq.simulation_mark('2026-06-01 10:15Z');
SELECT tickq.simulate_events('2026-06-01 12:40:59.999999Z', NULL, '2026-06-01 10:15Z');

SELECT is((SELECT array_agg(e.value ->> 0 ORDER BY e.value ->> 0) FROM mark AS m,
        jsonb_array_elements(m.state -> 'kinds') AS e (value)), ARRAY['a', 'b', 'c', 'd', 'g'],
    'at 10:15 a runs, b, c, d and g wait: the state names them');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'g'), '2026-06-01 14:00Z'::timestamptz,
    'at 12:41 g, which it names, is due after 13:15');
SELECT ok((SELECT count(*) FROM tickq.job_kind WHERE due_at < '2026-06-01 13:15Z' AND name = 'e') = 1,
    'and e, which it does not name, is due before 13:15 at 12:41');

CREATE TEMP VIEW queue AS
SELECT k.name, k.due_at, k.attempts, k.next_trigger, k.slot_at, k.first_slot_at, k.slots_covered, k.run_id,
    k.leased_by, k.leased_until
FROM tickq.job_kind AS k;
CREATE TEMP TABLE before AS SELECT * FROM queue;
SELECT pg_temp.restore_twice('2026-06-01 13:15Z', m.state, m.ids) FROM mark AS m;
CREATE TEMP TABLE twice AS SELECT * FROM queue;
UPDATE tickq.job_kind AS k SET due_at = b.due_at, attempts = b.attempts, next_trigger = b.next_trigger,
    slot_at = b.slot_at, first_slot_at = b.first_slot_at, slots_covered = b.slots_covered, run_id = b.run_id,
    leased_by = b.leased_by, leased_until = b.leased_until
FROM before AS b WHERE k.name = b.name;
SELECT tickq.simulation_restore('2026-06-01 13:15Z', m.state, m.ids) FROM mark AS m;

SELECT results_eq('SELECT * FROM queue ORDER BY name', 'SELECT * FROM twice ORDER BY name',
    'restored at 13:15, every kind as the restore that wrote the named kinds twice left it');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'e'), '2026-06-01 13:50Z'::timestamptz,
    'e, not named, waits for its next slot after 13:15');

SELECT * FROM finish();
ROLLBACK;
