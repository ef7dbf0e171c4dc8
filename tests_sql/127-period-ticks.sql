-- The load of a kind that stays where it is has one owner, tickq.period_ticks: the ticks its runs
-- hold over one period, as tickq.spread_offsets and tickq.spread_times count them.
BEGIN;
SELECT plan(5);

SELECT tickq.sync_registry('{"settings": {"timezone": "UTC"}, "kinds": {
    "cadence": {"command": ["x"], "every": 21600, "timeout": 600},
    "offset": {"command": ["x"], "every": 21600, "offset": 600, "timeout": 600},
    "daily": {"command": ["x"], "at": "06:30", "timeout": 600},
    "cron": {"command": ["x"], "cron": "0 */12 * * *", "timeout": 600},
    "fast": {"command": ["x"], "every": 30, "timeout": 600}}}', '2026-06-01 00:00Z');

-- One day of one-minute ticks from midnight; each run holds two ticks (120 s).
CREATE TEMP TABLE held ON COMMIT DROP AS
SELECT k.name, tickq.period_ticks(k, '{"cadence": 120, "offset": 120, "daily": 120, "cron": 120, "fast": 120}',
    interval '1 minute', interval '1 day', '2026-06-01 00:00Z') AS cells
FROM tickq.job_kind AS k;

SELECT is((SELECT h.cells FROM held AS h WHERE h.name = 'cadence'), '{0,1,360,361,720,721,1080,1081}',
    'a cadence of 6 hours: its four runs, two ticks each');
SELECT is((SELECT h.cells FROM held AS h WHERE h.name = 'offset'), '{10,11,370,371,730,731,1090,1091}',
    'with an offset of 10 minutes: ten ticks later');
SELECT is((SELECT h.cells FROM held AS h WHERE h.name = 'daily'), '{390,391}', 'a daily 06:30: once');
SELECT is((SELECT h.cells FROM held AS h WHERE h.name = 'cron'), '{0,1,720,721}', 'a cron string at 00:00 and 12:00');
SELECT is((SELECT cardinality(h.cells) FROM held AS h WHERE h.name = 'fast'), 2 * 1440,
    'a cadence faster than the tick is claimed once a tick: 1,440 runs of two ticks');

SELECT * FROM finish();
ROLLBACK;
