-- Registry sync: upserts, the registry wins, drift is logged, kinds retire, bad values are refused.
BEGIN;
SELECT plan(31);

SELECT is_empty($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent", "retries": 2},
        "ingest": {"command": ["bin/ingest"], "at": ["06:00"], "on": ["mon"], "timezone": "Europe/London",
            "timeout": 1500}
    }}', '2026-06-03 12:00Z')$$, 'a first sync with default settings finds no drift');

SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'email'), '2026-06-03 12:00Z'::timestamptz,
    'a new every-kind is due at once');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'ingest'), '2026-06-08 05:00Z'::timestamptz,
    'a new calendar kind is due at its next slot (Monday 06:00 London)');
SELECT is((SELECT lease FROM tickq.settings), '30 minutes'::interval,
    'the lease is the longest timeout (25m) plus the 5m margin');
SELECT is((SELECT registry -> 'command' FROM tickq.job_kind WHERE name = 'email'), '["bin/send", "--due"]'::jsonb,
    'the registry entry is mirrored for psql readers');

SELECT is_empty($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "retention": 2592000, "tick": 300},
    "kinds": {
        "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent", "retries": 2},
        "ingest": {"command": ["bin/ingest"], "at": ["06:00"], "on": ["mon"], "timezone": "Europe/London",
            "timeout": 1500}
    }}', '2026-06-03 12:00:30Z')$$,
    'settings equal to the stored ones in other units are no drift (30 days = 2592000 s)');
SELECT results_eq($$SELECT field, stored_value, registry_value FROM tickq.sync_registry('{
    "settings": {"slots": 3, "stale_after": 600},
    "kinds": {
        "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent", "retries": 2},
        "ingest": {"command": ["bin/ingest"], "at": ["06:00"], "on": ["mon"], "timezone": "Europe/London",
            "timeout": 1500}
    }}', '2026-06-03 12:00:40Z')$$,
    $$VALUES ('settings.stale_after', '900'::jsonb, '600'::jsonb)$$, 'a changed setting is drift, in seconds');

-- a second identical sync changes nothing
SELECT is_empty($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent", "retries": 2},
        "ingest": {"command": ["bin/ingest"], "at": "06:00", "on": ["mon"], "timezone": "Europe/London",
            "timeout": 1500}
    }}', '2026-06-03 12:01Z')$$, 'the same registry again: no drift (at as a string or a list)');

-- tamper with stored rows: the registry wins and each field is reported
UPDATE tickq.job_kind SET registry = jsonb_set(registry, '{command}', '["rm", "-rf", "/"]'),
    priority = 'low', retries = 9 WHERE name = 'email';
SELECT results_eq(
    $$SELECT kind, field, stored_value, registry_value FROM tickq.sync_registry('{
        "settings": {"slots": 3},
        "kinds": {
            "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent",
                "retries": 2},
            "ingest": {"command": ["bin/ingest"], "at": ["06:00"], "on": ["mon"], "timezone": "Europe/London",
                "timeout": 1500}
        }}', '2026-06-03 12:02Z') ORDER BY field$$,
    $$VALUES ('email', 'command', '["rm", "-rf", "/"]'::jsonb, '["bin/send", "--due"]'::jsonb),
             ('email', 'priority', '"low"', '"urgent"'),
             ('email', 'retries', '9', '2')$$,
    'each tampered field is returned as drift'
);
SELECT results_eq(
    $$SELECT registry -> 'command', priority::text, retries FROM tickq.job_kind WHERE name = 'email'$$,
    $$VALUES ('["bin/send", "--due"]'::jsonb, 'urgent', 2)$$,
    'and the registry value is back in the row'
);
SELECT is((SELECT count(*)::int FROM tickq.drift WHERE kind = 'email' AND detected_at = '2026-06-03 12:02Z'), 3,
    'the drift is kept in tickq.drift');

-- a kind leaves the registry: retired, not deleted; it comes back later
SELECT results_eq(
    $$SELECT kind, field, registry_value IS NULL FROM tickq.sync_registry('{"kinds": {
        "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent", "retries": 2}
    }}', '2026-06-03 12:03Z')$$,
    $$VALUES ('ingest', 'kind', true)$$,
    'a kind gone from the registry is reported'
);
SELECT results_eq($$SELECT enabled, retired_at FROM tickq.job_kind WHERE name = 'ingest'$$,
    $$VALUES (false, '2026-06-03 12:03Z'::timestamptz)$$, 'and retired (disabled), never deleted');
SELECT is((SELECT lease FROM tickq.settings), '9 minutes'::interval,
    'the lease follows the kinds still in the registry');
SELECT results_eq(
    $$SELECT kind, field, stored_value IS NULL FROM tickq.sync_registry('{"kinds": {
        "email": {"command": ["bin/send", "--due"], "every": 300, "timeout": 240, "priority": "urgent", "retries": 2},
        "ingest": {"command": ["bin/ingest"], "at": ["06:00"], "on": ["mon"], "timezone": "Europe/London",
            "timeout": 1500}
    }}', '2026-06-03 12:04Z')$$,
    $$VALUES ('ingest', 'kind', true)$$,
    'a retired kind that comes back is reported'
);
SELECT results_eq($$SELECT enabled, retired_at FROM tickq.job_kind WHERE name = 'ingest'$$,
    $$VALUES (true, NULL::timestamptz)$$, 'and enabled again');

-- a changed cadence takes effect at once
-- a cadence change syncs
SELECT * FROM tickq.sync_registry('{"kinds": {
    "email": {"command": ["bin/send", "--due"], "every": 60, "timeout": 240, "priority": "urgent", "retries": 2},
    "ingest": {"command": ["bin/ingest"], "at": ["06:00"], "on": ["mon"], "timezone": "Europe/London", "timeout": 1500}
}}', '2026-06-03 12:04:30Z');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'email'), '2026-06-03 12:00Z'::timestamptz,
    'a kind already due stays due after a cadence change');

-- refusals: the database names the kind and the key
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["a"], "every": 0, "timeout": 5}}}')$$,
    'TQ002', 'registry: kind "x", key "every": must be a duration from 1s to 366d, got 0s', 'zero cadence refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["a"], "every": -5, "timeout": 5}}}')$$,
    'TQ002', 'registry: kind "x", key "every": must be a duration from 1s to 366d, got -5s',
        'negative cadence refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["a"], "every": 60, "timeout": 0}}}')$$,
    'TQ002', 'registry: kind "x", key "timeout": must be a duration from 1s to 7d, got 0s', 'zero timeout refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["a"], "at": ["06:00"],
        "timezone": "Mars/Olympus", "timeout": 5}}}')$$,
    'TQ002',
    'registry: kind "x", key "timezone": unknown time zone "Mars/Olympus" (use an IANA name spelled as in the '
    || 'zone database, such as Europe/London)',
    'unknown zone refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["a"], "at": ["06:00"],
        "timezone": "UTC+3", "timeout": 5}}}')$$,
    'TQ002', 'registry: kind "x", key "timezone": unknown time zone "UTC+3" (use an IANA name spelled as in the '
    || 'zone database, such as Europe/London)',
    'a POSIX offset string is not an IANA zone');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": "bin/a --flag",
        "every": 60, "timeout": 5}}}')$$,
    'TQ002', 'registry: kind "x", key "command": must be a non-empty list of non-empty strings',
        'a command as one string refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["a"], "every": 60,
        "at": "06:00", "timeout": 5}}}')$$,
    'TQ002', 'registry: kind "x", key "every": give exactly one of "every" or "at"', 'both every and at refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"slots": 0}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "slots": must be a whole number from 1 to 1000, got 0', 'zero slots refused');
SELECT throws_ok($$INSERT INTO tickq.job_kind (name, every, timeout, due_at) VALUES ('y', '-1 minute', '1 minute',
    now())$$,
    '23514', 'kind "y": every must be from 1 to 31622400 seconds, got -00:01:00',
    'the table itself refuses a negative cadence (rule every_bounded of trigger kind_valid)');

SELECT throws_ok($$INSERT INTO tickq.job_kind (name, at_times, timezone, timeout, due_at)
    VALUES ('z', '{06:00}', 'Mars/Olympus', '1 minute', now())$$,
    '23514', 'kind "z": unknown time zone "Mars/Olympus"',
        'the table itself refuses an unknown zone (rule timezone_known of trigger kind_valid)');

SELECT throws_ok($$INSERT INTO tickq.job_kind (name, every, timeout, due_at) VALUES ('Bad Name', '1 minute',
    '1 minute', now())$$,
    '23514', 'kind "Bad Name": the name must be 1-100 of a-z 0-9 _ . - starting with a letter or digit',
    'the table itself refuses a bad name (rule name_format)');
SELECT throws_ok($$UPDATE tickq.job_kind SET on_days = '{0,8}' , at_times = '{06:00}', every = NULL
    WHERE name = 'email'$$,
    '23514', 'kind "email": on_days must be ISO weekdays 1-7, nth weekdays 11-57 or last weekdays 91-97, got {0,8}',
    'an update of a registry column is checked too (rule on_days_iso)');
SELECT throws_ok($$UPDATE tickq.job_kind SET retired_at = now() WHERE name = 'email'$$,
    '23514', 'kind "email": a retired kind must be disabled', 'a retired kind cannot stay enabled');

-- the lease can never be shorter than a timeout, whoever writes the table
SET CONSTRAINTS ALL IMMEDIATE;
SELECT throws_ok($$UPDATE tickq.job_kind SET timeout = '2 hours' WHERE name = 'email'$$,
    'TQ004', NULL, 'a timeout longer than the lease is refused by the database');

SELECT * FROM finish();
ROLLBACK;
