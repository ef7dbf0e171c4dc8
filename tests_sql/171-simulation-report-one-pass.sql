-- tickq.simulation_report reads each kind's longest wait that began first in the same pass as
-- its runs (the greatest [wait, until - due, until - end], read back in UTC): on waits of more
-- than a day across a clock change of the session's time zone, due and claimed at odd
-- microseconds, two as long (the one due first wins), one without a due time, a skipped slot
-- and a kind still waiting at the end, it gives what the sort-based reading gives, row for row.
BEGIN;
SELECT plan(3);
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
