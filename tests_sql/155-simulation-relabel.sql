-- Copies of a stretch whose state differs from the one a day before only in the slot rows the
-- runs going on hold (sql/api/18_simulation_relabel.sql). Two slots; a (hourly at :00) and b
-- (hourly at :10) hold them half an hour each, c (hourly at :20) waits for a's row at :30. On
-- the second day x (only then, at 09:55) takes row 1 first: a takes row 2 at 10:00, b row 1 at
-- 10:10, and c row 2 at 10:30, until the rows are free again at 10:40. At 10:15 the state is the
-- day before's but for the rows' numbers: the stretch from 10:15 the day before, copied with
-- each run's row worked out again, gives the runs the clock gives, column for column, slot rows
-- too, and the state it stands in at 12:00.
BEGIN;
SELECT plan(16);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "cron": "0 * * * *", "timeout": 1800},
        "b": {"command": ["x"], "cron": "10 * * * *", "timeout": 1800},
        "c": {"command": ["x"], "cron": "20 * * * *", "timeout": 300},
        "x": {"command": ["x"], "cron": "55 9 2 6 *", "timeout": 600, "priority": "high"}
    }}', '2026-06-01 07:00Z');

CREATE TEMP TABLE mark AS SELECT now() AS at, m.* FROM tickq.simulation_mark(now()) AS m WHERE false;

-- The clock part by part from p_from until p_until, its state kept at each part's start.
CREATE FUNCTION pg_temp.clock(p_from timestamptz, p_until timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_part record;
BEGIN
    FOR v_part IN SELECT * FROM tickq.simulation_parts(p_until - interval '1 microsecond', p_from) LOOP
        INSERT INTO mark SELECT v_part.part_from, m.* FROM tickq.simulation_mark(v_part.part_from) AS m
        WHERE NOT EXISTS (SELECT FROM mark AS k WHERE k.at = v_part.part_from);
        PERFORM tickq.simulation_clock(v_part.part_from, v_part.part_until, tickq.simulation_holds(NULL), true);
    END LOOP;
END
$$;
SELECT tickq.simulation_start('2026-06-01 08:00Z');
SELECT pg_temp.clock('2026-06-01 08:00Z', '2026-06-02 10:15Z');
INSERT INTO mark SELECT '2026-06-02 10:15Z', m.* FROM tickq.simulation_mark('2026-06-02 10:15Z') AS m;

SELECT isnt((SELECT m.state FROM mark AS m WHERE m.at = '2026-06-02 10:15Z'),
    (SELECT m.state FROM mark AS m WHERE m.at = '2026-06-01 10:15Z'),
    'at 10:15 the state is not the one a day before');
SELECT is((SELECT unlabelled FROM mark WHERE at = '2026-06-02 10:15Z'),
    (SELECT unlabelled FROM mark WHERE at = '2026-06-01 10:15Z'), 'but for the slot rows'' numbers');
SELECT is(tickq.simulation_unlabelled((SELECT state FROM mark WHERE at = '2026-06-02 10:15Z')),
    tickq.simulation_unlabelled((SELECT state FROM mark WHERE at = '2026-06-01 10:15Z')), 'the same without them');

-- What the clock gives from 10:15 to 12:00, run for run (ids counted from 10:15's first).
CREATE TEMP VIEW copied AS
SELECT string_agg(concat_ws(' ', r.id - (SELECT m.first_id FROM mark AS m WHERE m.at = '2026-06-02 10:15Z'), r.kind,
    r.attempt, r.run_trigger, r.slots, r.claimed_at, r.started_at, r.finished_at, r.outcome, r.exit_code, r.duration,
    r.due_at, r.slot_row, r.late_report_at, r.slot_at, r.first_slot_at, r.slots_covered), '; ' ORDER BY r.id) AS runs,
    (SELECT m.state::text FROM tickq.simulation_mark('2026-06-02 12:00Z') AS m) AS state
FROM tickq.job_run AS r
WHERE r.claimed_at >= '2026-06-02 10:15Z' OR r.finished_at >= '2026-06-02 10:15Z';
-- The clock's runs and state, then everything it did undone (a block that ends in an error).
CREATE FUNCTION pg_temp.clocked() RETURNS TABLE (runs text, state text) LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        PERFORM pg_temp.clock('2026-06-02 10:15Z', '2026-06-02 12:00Z');
        SELECT c.runs, c.state INTO runs, state FROM copied AS c;
        RAISE EXCEPTION 'undone';
    EXCEPTION WHEN raise_exception THEN
        RETURN NEXT;
    END;
END
$$;
CREATE TEMP TABLE clocked AS SELECT * FROM pg_temp.clocked();

-- The same stretch copied from the day before.
CREATE TEMP VIEW ends AS
SELECT f.at AS from_at, l.at AS until_at, f.state AS from_state, l.state AS until_state, f.ids AS from_ids,
    l.ids AS until_ids, n.ids AS now_ids, f.first_id AS from_first, l.first_id AS until_first, n.first_id AS now_first
FROM mark AS f, mark AS l, mark AS n
WHERE f.at = '2026-06-01 10:15Z' AND l.at = '2026-06-01 12:00Z' AND n.at = '2026-06-02 10:15Z';
CREATE TEMP TABLE relabel AS
SELECT r.* FROM ends AS e
CROSS JOIN LATERAL tickq.simulation_relabel(e.from_at, '15 minutes', 7, e.from_first, e.until_first, e.from_ids,
    e.now_ids) AS r;
SELECT is((SELECT r.rows FROM relabel AS r), ARRAY[2],
    'the stretch''s first run (c at 10:30) takes row 2, the row a frees; the rest are the same again from 10:40');
SELECT is((SELECT r.maps FROM relabel AS r), ARRAY[2, 1], 'and at 10:30 rows 1 and 2 are swapped, by 10:45 no more');

-- Where a run of the stretch did not take the lowest free row, its rows are not worked out again.
UPDATE tickq.job_run SET slot_row = 2 WHERE kind = 'c' AND claimed_at = '2026-06-01 10:30Z';
SELECT is((SELECT r.rows FROM ends AS e
        CROSS JOIN LATERAL tickq.simulation_relabel(e.from_at, '15 minutes', 7, e.from_first, e.until_first, e.from_ids,
            e.now_ids) AS r), NULL,
    'a stretch whose rows were not taken as claims take them is not copied that way');
UPDATE tickq.job_run SET slot_row = 1 WHERE kind = 'c' AND claimed_at = '2026-06-01 10:30Z';
-- Nor where a run going on at the stretch's start ended otherwise than a claim's run ends (its
-- lease lost): when its row was free again is not the claims' to say.
UPDATE tickq.job_run SET outcome = 'lost' WHERE kind = 'a' AND claimed_at = '2026-06-01 10:00Z';
SELECT is((SELECT r.rows FROM ends AS e
        CROSS JOIN LATERAL tickq.simulation_relabel(e.from_at, '15 minutes', 7, e.from_first, e.until_first, e.from_ids,
            e.now_ids) AS r), NULL,
    'nor one that began with a run whose lease was lost');
UPDATE tickq.job_run SET outcome = 'ok' WHERE kind = 'a' AND claimed_at = '2026-06-01 10:00Z';

SELECT tickq.simulation_copy(e.from_at, e.until_at, '1 day', tickq.simulation_relabel_state(e.until_state, NULL),
    e.from_ids, e.until_ids, e.now_ids, e.from_first, e.until_first, e.now_first, (SELECT r.rows FROM relabel AS r))
FROM ends AS e;
SELECT is((SELECT c.runs FROM copied AS c), (SELECT c.runs FROM clocked AS c),
    'the copy gives the runs the clock gives, slot rows too');
SELECT is((SELECT c.state FROM copied AS c), (SELECT c.state FROM clocked AS c),
    'and stands in the same state at 12:00');
SELECT ok(EXISTS (
        SELECT FROM tickq.job_run AS o
        INNER JOIN tickq.job_run AS r ON o.kind = r.kind AND o.claimed_at = r.claimed_at - interval '1 day'
        WHERE r.claimed_at >= '2026-06-02 10:15Z' AND r.slot_row <> o.slot_row),
    'where some runs take other rows than the day before');

-- The runs relabel reads, a chunk at a time (tickq.simulation_relabel_chunk): those the claims
-- of the stretch opened, in claim order; none where one is not such a run, or where a run was
-- claimed by the last instant the chunk before read (the chunks out of claim order).
CREATE TEMP VIEW chunk AS
SELECT e.*, (SELECT min(r.claimed_at) FROM tickq.job_run AS r WHERE r.id >= e.from_first) AS first_claim
FROM ends AS e;
SELECT is((SELECT c.ids FROM chunk AS e
        CROSS JOIN LATERAL tickq.simulation_relabel_chunk(e.from_first, e.until_first, e.from_at, e.until_at, 2,
            NULL) AS c),
    (SELECT array_agg(r.id ORDER BY r.claimed_at, r.slot_row) FROM ends AS e
        INNER JOIN tickq.job_run AS r ON e.from_first <= r.id AND e.until_first > r.id),
    'the stretch''s runs are read in claim order');
SELECT is((SELECT c.next_id FROM chunk AS e
        CROSS JOIN LATERAL tickq.simulation_relabel_chunk(e.from_first, e.until_first, e.from_at, e.until_at, 2,
            NULL) AS c),
    (SELECT e.until_first FROM ends AS e), 'to the stretch''s end, in one chunk');
SELECT isnt((SELECT c.ids FROM chunk AS e
        CROSS JOIN LATERAL tickq.simulation_relabel_chunk(e.from_first, e.until_first, e.from_at, e.until_at, 2,
            e.first_claim - interval '1 second') AS c), NULL,
    'after a last instant read before the first claim, they are read');
SELECT is((SELECT c.ids FROM chunk AS e
        CROSS JOIN LATERAL tickq.simulation_relabel_chunk(e.from_first, e.until_first, e.from_at, e.until_at, 2,
            e.first_claim) AS c), NULL,
    'a chunk with a run claimed at the last instant read before is out of claim order: refused');
SELECT is((SELECT c.ids FROM chunk AS e
        CROSS JOIN LATERAL tickq.simulation_relabel_chunk(e.from_first, e.until_first,
            e.first_claim + interval '1 second', e.until_at, 2, NULL) AS c), NULL,
    'and so is one with a run claimed before the stretch');

-- The state at a part's start while the rows differ, named as they are now.
SELECT is(tickq.simulation_relabel_state((SELECT m.state FROM mark AS m WHERE m.at = '2026-06-01 10:15Z'), ARRAY[2, 1]),
    (SELECT m.state FROM mark AS m WHERE m.at = '2026-06-02 10:15Z'),
    'the day before''s 10:15 with rows 1 and 2 swapped is 10:15''s');

SELECT * FROM finish();
ROLLBACK;
