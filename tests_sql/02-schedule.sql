-- Schedule arithmetic: clock-aligned cadences, calendar slots in a zone, daylight-saving days.
BEGIN;
SELECT plan(22);

-- every: aligned to the clock, strictly after the given time
SELECT is(tickq.next_slot(('15 minutes', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:07:13Z'),
    '2026-06-01 10:15:00Z'::timestamptz, 'every 15m lands on the quarter hour');
SELECT is(tickq.next_slot(('15 minutes', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:15:00Z'),
    '2026-06-01 10:30:00Z'::timestamptz, 'a slot exactly at p_after is not "after" it');
SELECT is(tickq.next_slot(('5 minutes', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 23:59:59Z'),
    '2026-06-02 00:00:00Z'::timestamptz, 'every 5m crosses midnight on :00');
SELECT is(tickq.next_slot(('1 day', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule, '2026-06-01 10:00Z'),
    '2026-06-02 00:00:00Z'::timestamptz, 'every 1d lands on midnight UTC');

-- calendar
SELECT is(tickq.next_slot((NULL, NULL, '{06:00}', NULL, NULL, NULL, NULL, 'Europe/London')::tickq.schedule,
    '2026-06-01 04:00Z'),
    '2026-06-01 05:00:00Z'::timestamptz, '06:00 London in summer is 05:00 UTC');
SELECT is(tickq.next_slot((NULL, NULL, '{06:00}', NULL, NULL, NULL, NULL, 'Europe/London')::tickq.schedule,
    '2026-06-01 05:00Z'),
    '2026-06-02 05:00:00Z'::timestamptz, 'the slot just run is not next: tomorrow is');
SELECT is(tickq.next_slot((NULL, NULL, '{06:00,18:00}', NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 07:00Z'),
    '2026-06-01 18:00:00Z'::timestamptz, 'several times of day: the next one today');
SELECT is(tickq.next_slot((NULL, NULL, '{06:00}', '{1}', NULL, NULL, NULL, 'Europe/London')::tickq.schedule,
    '2026-06-02 12:00Z'),
    '2026-06-08 05:00:00Z'::timestamptz, 'mondays only: from a Tuesday, next Monday');
SELECT is(tickq.next_slot((NULL, NULL, '{06:00}', '{6,7}', NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-05 12:00Z'),
    '2026-06-06 06:00:00Z'::timestamptz, 'weekends: from a Friday, Saturday');

-- Daylight saving: a daily 02:30 runs exactly once on each change day.
CREATE TEMPORARY TABLE slots_of_day (zone text, day date, slot timestamptz);
INSERT INTO slots_of_day
SELECT z.zone, z.day, s.slot
FROM (VALUES
    ('America/New_York', '2026-03-08'::date), ('America/New_York', '2026-11-01'::date),
    ('Europe/London', '2026-03-29'::date), ('Europe/London', '2026-10-25'::date)
) AS z (zone, day)
CROSS JOIN LATERAL (
    WITH RECURSIVE walk (slot) AS (
        SELECT tickq.next_slot((NULL, NULL, '{02:30}', NULL, NULL, NULL, NULL, z.zone)::tickq.schedule,
            (z.day - 1) AT TIME ZONE z.zone)
        UNION ALL
        SELECT tickq.next_slot((NULL, NULL, '{02:30}', NULL, NULL, NULL, NULL, z.zone)::tickq.schedule,
            w.slot) FROM walk AS w
        WHERE w.slot < (z.day + 3) AT TIME ZONE z.zone
    )
    SELECT w.slot FROM walk AS w
) AS s;

SELECT is((SELECT count(*)::int FROM slots_of_day
    WHERE zone = 'America/New_York' AND day = '2026-03-08'
      AND (slot AT TIME ZONE zone)::date = day), 1, 'New York spring forward: 02:30 runs once');
SELECT is((SELECT slot FROM slots_of_day
    WHERE zone = 'America/New_York' AND day = '2026-03-08'
      AND (slot AT TIME ZONE zone)::date = day), '2026-03-08 07:30Z'::timestamptz,
    'New York spring forward: the missing 02:30 runs at 03:30 EDT');
SELECT is((SELECT count(*)::int FROM slots_of_day
    WHERE zone = 'America/New_York' AND day = '2026-11-01'
      AND (slot AT TIME ZONE zone)::date = day), 1, 'New York fall back: 02:30 runs once');
SELECT is((SELECT count(*)::int FROM slots_of_day
    WHERE zone = 'Europe/London' AND day = '2026-03-29'
      AND (slot AT TIME ZONE zone)::date = day), 1, 'London spring forward: 02:30 runs once');
SELECT is((SELECT count(*)::int FROM slots_of_day
    WHERE zone = 'Europe/London' AND day = '2026-10-25'
      AND (slot AT TIME ZONE zone)::date = day), 1, 'London fall back: 02:30 runs once');
SELECT is((SELECT count(DISTINCT date(slot AT TIME ZONE zone))::int FROM slots_of_day),
    (SELECT count(*)::int FROM slots_of_day), 'never two slots on one local day, around any change');
-- an ambiguous local time (01:30 on a fall-back night) is still one slot
SELECT is(tickq.slots_between((NULL, NULL, '{01:30}', NULL, NULL, NULL, NULL, 'America/New_York')::tickq.schedule,
    '2026-10-31 12:00Z', '2026-11-01 12:00Z'), 1, 'an ambiguous 01:30 is one slot, not two');

-- slots_between: what a late run merges
SELECT is(tickq.slots_between(('5 minutes', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:00Z', '2026-06-01 11:00Z'),
    12, 'an hour asleep on a 5m cadence is 12 slots after the due one');
SELECT is(tickq.slots_between(('5 minutes', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 10:00Z', '2026-06-01 10:00Z'),
    0, 'no time, no slots');
SELECT is(tickq.slots_between((NULL, NULL, '{06:00}', NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-06-01 06:00Z', '2026-06-04 07:00Z'),
    3, 'three days asleep on a daily schedule: three more slots');
SELECT results_eq($$SELECT tickq.format_duration(make_interval(secs => s)) FROM unnest(ARRAY[30, 300, 5400, 86400,
    90061]) AS s$$,
    $$VALUES ('30s'), ('5m'), ('1h30m'), ('1d'), ('1d1h1m1s')$$, 'durations read as the registry writes them');
SELECT is(tickq.describe_schedule(('15 minutes', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule),
    'every 15m', 'a cadence reads as one line');
SELECT is(tickq.describe_schedule(
    (NULL, NULL, '{06:00,18:00}', '{1,5}', NULL, NULL, NULL, 'Europe/London')::tickq.schedule),
    'at 06:00,18:00 on mon,fri Europe/London', 'a calendar schedule reads as one line');

SELECT * FROM finish();
ROLLBACK;
