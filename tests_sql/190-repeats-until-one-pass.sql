-- tickq.simulation_repeats_until reads the kinds once where nothing is left to walk (every
-- cadence divides the shift, every calendar is in a zone that keeps its offset, for whole
-- days): a pause, the calendars' zones and the cadences come from one pass, and the kinds to
-- walk are read only when there are some (each pass cost about a third of a call of a thousand
-- kinds). The answers stay those of tests_sql/69.
BEGIN;
SELECT plan(7);

CREATE FUNCTION pg_temp.scans() RETURNS bigint
LANGUAGE sql VOLATILE AS $$ SELECT pg_stat_get_xact_numscans('tickq.job_kind'::regclass) $$;
CREATE TEMP TABLE seen (n bigint);
CREATE FUNCTION pg_temp.since() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    WITH o AS (DELETE FROM seen RETURNING n) INSERT INTO seen SELECT pg_temp.scans() RETURNING n - coalesce((SELECT n FROM o), 0)
$$;

-- a cadence that divides a day, two times of day in UTC and a weekly kind on Tuesdays
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "twice": {"command": ["x"], "at": ["01:00", "13:00"], "timeout": 60},
        "weekly": {"command": ["x"], "at": ["03:10"], "on": ["tue"], "timeout": 60}
    }}', '2026-06-01 00:00Z');
INSERT INTO seen SELECT pg_temp.scans();
CREATE TEMP TABLE answer AS
SELECT tickq.simulation_repeats_until('2026-06-02 04:00Z', '2026-06-03 04:00Z', '1 day', '{}', '{}', '{}', '{}') AS at;
SELECT is(pg_temp.since(), 1::bigint, 'nothing to walk: the kinds read once');
SELECT is((SELECT at FROM answer), '2026-06-03 04:00Z'::timestamptz, 'the whole stretch repeats');
SELECT is(tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-02 00:00Z', '1 day'),
    '2026-06-01 03:10Z'::timestamptz, 'Monday repeats on Tuesday only until the weekly kind''s slot (its break)');

-- a cadence of 55 minutes: walked
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "odd": {"command": ["x"], "every": 3300, "timeout": 60},
        "twice": {"command": ["x"], "at": ["01:00", "13:00"], "timeout": 60}
    }}', '2026-06-01 00:00Z');
SELECT pg_temp.since();
CREATE TEMP TABLE walked AS
SELECT tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-02 00:00Z', '1 day', '{}', '{}', '{}', '{}') AS at;
SELECT is(pg_temp.since(), 2::bigint, 'a cadence the day does not divide: read again to walk it');
SELECT cmp_ok((SELECT at FROM walked), '<', '2026-06-01 01:00Z'::timestamptz,
    'and its slots a day later differ within the hour');

-- a calendar in London, its clock changing within the shift: walked
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "london": {"command": ["x"], "at": ["09:00"], "timezone": "Europe/London", "timeout": 60}
    }}', '2026-03-27 00:00Z');
SELECT pg_temp.since();
CREATE TEMP TABLE changed AS
SELECT tickq.simulation_repeats_until('2026-03-27 10:00Z', '2026-03-28 10:00Z', '1 day', '{}', '{}', '{}', '{}') AS at;
SELECT is(pg_temp.since(), 2::bigint, 'a zone changing its offset: read again to walk it');
SELECT is((SELECT at FROM changed), '2026-03-28 08:00Z'::timestamptz,
    'Sunday''s 09:00 is an hour earlier in UTC than Saturday''s: the stretch ends where it falls a day before');

SELECT * FROM finish();
ROLLBACK;
