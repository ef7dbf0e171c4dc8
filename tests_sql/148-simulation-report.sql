-- tickq.simulation_report reads each kind's longest wait by hashing, not by sorting every wait
-- (sql/api/07_simulate.sql): on runs with the cases a sort decides (two waits as long, the one
-- due first wins; a run without a due time, which a sort by wait puts first; a kind only
-- waiting at the end; a skipped slot; a starved kind and what it waited behind; a kind never
-- due) it gives what the sort-based reading it replaced gives, row for row.
BEGIN;
SELECT plan(7);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "tie": {"command": ["x"], "every": 3600, "timeout": 60},
        "nodue": {"command": ["x"], "every": 3600, "timeout": 60},
        "waiting": {"command": ["x"], "every": 3600, "timeout": 60, "priority": "low"},
        "skips": {"command": ["x"], "every": 3600, "timeout": 60, "catch_up": 60},
        "hog": {"command": ["x"], "every": 3600, "timeout": 3000, "priority": "high"},
        "never": {"command": ["x"], "every": 86400, "timeout": 60}
    }}', '2026-06-01 07:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity'
WHERE name IN ('tickq.housekeeping', 'never', 'tie', 'nodue', 'skips', 'hog');
UPDATE tickq.job_kind SET due_at = '2026-06-01 09:40Z' WHERE name = 'waiting';

-- The sort-based reading the report used before (the reference: not the code under test).
CREATE FUNCTION pg_temp.sorted_report(p_until timestamptz, p_now timestamptz) RETURNS SETOF tickq.simulated_kind
LANGUAGE sql STABLE AS $$
    WITH settings AS (SELECT s.stale_after FROM tickq.settings AS s),
    sim_runs AS (
        SELECT r.kind, r.due_at, r.claimed_at, coalesce(r.finished_at, p_until) AS ended_at,
            r.outcome = 'skipped' AS skipped
        FROM tickq.job_run AS r
        WHERE r.dispatcher = 'simulator' AND r.claimed_at >= p_now AND r.claimed_at <= p_until
    ),
    waits AS (
        SELECT r.kind, r.due_at, r.claimed_at AS until FROM sim_runs AS r
        UNION ALL
        SELECT k.name, k.due_at, p_until FROM tickq.job_kind AS k
        WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= p_until
    ),
    worst AS (
        SELECT DISTINCT ON (w.kind) w.kind, w.due_at, w.until, w.until - w.due_at AS wait
        FROM waits AS w
        ORDER BY w.kind, w.until - w.due_at DESC, w.due_at
    ),
    run_counts AS (
        SELECT r.kind, (count(*) FILTER (WHERE NOT r.skipped))::integer AS runs, bool_or(r.skipped) AS skipped
        FROM sim_runs AS r GROUP BY r.kind
    ),
    holders AS (SELECT r.* FROM sim_runs AS r WHERE NOT r.skipped)
    SELECT k.name, k.priority, coalesce(c.runs, 0),
        CASE WHEN w.kind IS NOT NULL THEN greatest(w.wait, '0'::interval) END,
        coalesce(w.wait > s.stale_after, false) OR coalesce(c.skipped, false),
        CASE WHEN w.wait > '0'::interval THEN w.due_at END,
        CASE WHEN w.wait > s.stale_after OR c.skipped THEN ARRAY(
            SELECT r.kind FROM holders AS r
            WHERE r.kind <> k.name AND r.claimed_at < w.until AND r.ended_at > w.due_at
            GROUP BY r.kind
            ORDER BY sum(least(r.ended_at, w.until) - greatest(r.claimed_at, w.due_at)) DESC, r.kind
        ) END
    FROM tickq.job_kind AS k CROSS JOIN settings AS s
    LEFT JOIN worst AS w ON w.kind = k.name
    LEFT JOIN run_counts AS c ON c.kind = k.name
    WHERE k.enabled
    ORDER BY k.priority, k.name
$$;

INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, finished_at, outcome, due_at)
VALUES
    -- two waits of 20 minutes: the one due at 08:00 is the worst, not the later one
    ('tie', 1, 'schedule', 1, 'simulator', '2026-06-01 09:20Z', '2026-06-01 09:21Z', 'ok', '2026-06-01 09:00Z'),
    ('tie', 1, 'schedule', 1, 'simulator', '2026-06-01 08:20Z', '2026-06-01 08:21Z', 'ok', '2026-06-01 08:00Z'),
    ('tie', 1, 'schedule', 1, 'simulator', '2026-06-01 10:05Z', '2026-06-01 10:06Z', 'ok', '2026-06-01 10:00Z'),
    -- a run without a due time beside a long wait
    ('nodue', 1, 'schedule', 1, 'simulator', '2026-06-01 08:30Z', '2026-06-01 08:31Z', 'ok', '2026-06-01 08:00Z'),
    ('nodue', 1, 'manual', 0, 'simulator', '2026-06-01 09:00Z', '2026-06-01 09:01Z', 'ok', NULL),
    -- a slot skipped for its catch_up, and a run
    ('skips', 1, 'schedule', 1, 'simulator', '2026-06-01 08:10Z', '2026-06-01 08:10Z', 'skipped', '2026-06-01 08:00Z'),
    ('skips', 1, 'schedule', 1, 'simulator', '2026-06-01 09:02Z', '2026-06-01 09:03Z', 'ok', '2026-06-01 09:00Z'),
    -- what the starved kinds waited behind, one still running at the end
    ('hog', 1, 'schedule', 1, 'simulator', '2026-06-01 08:00Z', '2026-06-01 08:50Z', 'ok', '2026-06-01 08:00Z'),
    ('hog', 1, 'schedule', 1, 'simulator', '2026-06-01 09:30Z', NULL, 'running', '2026-06-01 09:30Z'),
    -- a run before the window: not counted
    ('tie', 1, 'schedule', 1, 'simulator', '2026-06-01 06:00Z', '2026-06-01 07:30Z', 'ok', '2026-06-01 05:00Z'),
    -- a dispatcher's run: not the simulator's
    ('never', 1, 'schedule', 1, 'laptop', '2026-06-01 08:00Z', '2026-06-01 09:00Z', 'ok', '2026-06-01 07:00Z');

SELECT results_eq(
    $$SELECT * FROM tickq.simulation_report('2026-06-01 10:30Z', '2026-06-01 07:00Z')$$,
    $$SELECT * FROM pg_temp.sorted_report('2026-06-01 10:30Z', '2026-06-01 07:00Z')$$,
    'the report is the sort-based reading, row for row');
SELECT results_eq(
    $$SELECT kind, runs, longest_wait, starved, worst_due_at
      FROM tickq.simulation_report('2026-06-01 10:30Z', '2026-06-01 07:00Z')
      WHERE kind IN ('tie', 'nodue', 'waiting', 'never') ORDER BY kind$$,
    $$VALUES ('never', 0, NULL::interval, false, NULL::timestamptz),
        ('nodue', 2, '0'::interval, false, NULL),
        ('tie', 3, '20 minutes'::interval, true, '2026-06-01 08:00Z'),
        ('waiting', 0, '50 minutes'::interval, true, '2026-06-01 09:40Z')$$,
    'two waits as long: the one due first; a run without a due time: no wait known; waiting at the end counts');
SELECT is((SELECT behind FROM tickq.simulation_report('2026-06-01 10:30Z', '2026-06-01 07:00Z') WHERE kind = 'waiting'),
    ARRAY['hog', 'tie'], 'a starved kind waited behind the runs holding the slot meanwhile, longest first');
-- a window as long again, beside the first: the same over a wider span
SELECT results_eq(
    $$SELECT * FROM tickq.simulation_report('2026-06-01 12:00Z', '2026-06-01 05:00Z')$$,
    $$SELECT * FROM pg_temp.sorted_report('2026-06-01 12:00Z', '2026-06-01 05:00Z')$$,
    'and over a wider span too');

-- The longest wait read in the same pass as the runs (the greatest [wait, until - due, until -
-- end], read back in UTC): on waits of more than a day across a clock change of the session's
-- time zone, due and claimed at odd microseconds, two as long (the one due first wins), one
-- without a due time, a skipped slot and a kind still waiting at the end, the same again.
UPDATE tickq.job_run SET outcome = 'lost', finished_at = claimed_at WHERE outcome = 'running';
DELETE FROM tickq.job_run;
SET LOCAL timezone = 'America/New_York';
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "long": {"command": ["x"], "every": 3600, "timeout": 60},
        "nodue": {"command": ["x"], "every": 3600, "timeout": 60},
        "skips": {"command": ["x"], "every": 3600, "timeout": 60, "catch_up": 60},
        "waiting": {"command": ["x"], "every": 3600, "timeout": 60, "priority": "low"},
        "hog": {"command": ["x"], "every": 3600, "timeout": 3000, "priority": "high"}
    }}', '2026-03-06 07:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name IN ('tickq.housekeeping', 'long', 'nodue', 'skips', 'hog');
UPDATE tickq.job_kind SET due_at = '2026-03-07 23:59:59.999999Z' WHERE name = 'waiting';
INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, finished_at, outcome, due_at)
VALUES
    -- two waits of two days and a half hour across New York's change to summer time (8 March):
    -- the one due first is the worst
    ('long', 1, 'schedule', 1, 'simulator', '2026-03-09 12:30:00.000001Z', '2026-03-09 12:31Z', 'ok',
        '2026-03-07 12:00:00.123457Z'),
    ('long', 1, 'schedule', 1, 'simulator', '2026-03-09 06:30:00.000001Z', '2026-03-09 06:31Z', 'ok',
        '2026-03-07 06:00:00.123457Z'),
    ('long', 1, 'schedule', 1, 'simulator', '2026-03-09 13:00:00.5Z', '2026-03-09 13:01Z', 'ok',
        '2026-03-09 12:59:59.999999Z'),
    -- a run without a due time beside a long wait
    ('nodue', 1, 'schedule', 1, 'simulator', '2026-03-08 08:30:00.000007Z', '2026-03-08 08:31Z', 'ok',
        '2026-03-07 08:00:00.000003Z'),
    ('nodue', 1, 'manual', 0, 'simulator', '2026-03-08 09:00Z', '2026-03-08 09:01Z', 'ok', NULL),
    -- a slot skipped for its catch_up after a wait of a day
    ('skips', 1, 'schedule', 1, 'simulator', '2026-03-08 08:10:00.25Z', '2026-03-08 08:10:00.25Z', 'skipped',
        '2026-03-07 08:00:00.75Z'),
    ('skips', 1, 'schedule', 1, 'simulator', '2026-03-09 09:02Z', '2026-03-09 09:03Z', 'ok', '2026-03-09 09:00Z'),
    -- what the starved kinds waited behind, one still running at the end
    ('hog', 1, 'schedule', 1, 'simulator', '2026-03-07 08:00Z', '2026-03-08 07:50:00.000001Z', 'ok',
        '2026-03-07 08:00Z'),
    ('hog', 1, 'schedule', 1, 'simulator', '2026-03-09 09:30Z', NULL, 'running', '2026-03-09 09:30Z');

SELECT results_eq(
    $$SELECT * FROM tickq.simulation_report('2026-03-10 10:30:00.000001Z', '2026-03-06 07:00Z')$$,
    $$SELECT * FROM pg_temp.sorted_report('2026-03-10 10:30:00.000001Z', '2026-03-06 07:00Z')$$,
    'the report is the sort-based reading, row for row, across a clock change of the session''s zone');
SELECT results_eq(
    $$SELECT kind, longest_wait, worst_due_at
      FROM tickq.simulation_report('2026-03-10 10:30:00.000001Z', '2026-03-06 07:00Z')
      WHERE kind IN ('long', 'skips', 'waiting') ORDER BY kind$$,
    $$VALUES ('long', '2 days 00:29:59.876544'::interval, '2026-03-07 06:00:00.123457Z'::timestamptz),
        ('skips', '1 day 00:09:59.5'::interval, '2026-03-07 08:00:00.75Z'),
        ('waiting', '2 days 10:30:00.000002'::interval, '2026-03-07 23:59:59.999999Z')$$,
    'to the microsecond: the longest wait due first');
SELECT is((SELECT behind FROM tickq.simulation_report('2026-03-10 10:30:00.000001Z', '2026-03-06 07:00Z')
    WHERE kind = 'skips'), ARRAY['hog'], 'and what it waited behind, from when it was due to its end');

SELECT * FROM finish();
ROLLBACK;
