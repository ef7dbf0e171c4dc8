-- Legacy zone names that are zones but not what a user means (EST: UTC-5 all year, so a New
-- York job runs an hour off all summer) are refused by the registry's value rules, naming the
-- key and the IANA name to use. A fixed offset chosen on purpose (Etc/GMT+5) stays allowed.
BEGIN;
SELECT plan(9);

SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"timezone": "EST"}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "timezone": EST is a legacy name: a fixed UTC-5 with no '
    'daylight saving; use America/New_York for Eastern time (or Etc/GMT+5 for UTC-5 all year)',
    'settings timezone = EST is refused with the name to use');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": ["06:00"],
    "timezone": "EST5EDT", "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "timezone": EST5EDT is a legacy name: US Eastern rules without '
    'the history of any place; use America/New_York',
    'a kind''s EST5EDT is refused with the name to use');
SELECT is((SELECT count(*)::int FROM unnest(ARRAY['EST', 'MST', 'HST', 'EST5EDT', 'CST6CDT', 'MST7MDT',
    'PST8PDT']) AS z (zone) WHERE tickq.legacy_zone_problem(z.zone) IS NOT NULL), 7,
    'every fixed-offset and POSIX-style US name has a message');
SELECT ok(tickq.legacy_zone_problem('MST') LIKE '%America/Denver%'
    AND tickq.legacy_zone_problem('HST') LIKE '%Pacific/Honolulu%'
    AND tickq.legacy_zone_problem('PST8PDT') LIKE '%America/Los_Angeles%'
    AND tickq.legacy_zone_problem('CST6CDT') LIKE '%America/Chicago%', 'each names its IANA zone');
SELECT ok(tickq.legacy_zone_problem('America/New_York') IS NULL
    AND tickq.legacy_zone_problem('Etc/GMT+5') IS NULL AND tickq.legacy_zone_problem('UTC') IS NULL,
    'IANA names and Etc/GMT offsets have none');
SELECT lives_ok($$SELECT tickq.sync_registry('{"settings": {"timezone": "Etc/GMT+5"},
    "kinds": {"y": {"command": ["y"], "at": ["06:00"], "timezone": "America/New_York", "timeout": 60}}}')$$,
    'Etc/GMT+5 and America/New_York are accepted');

-- Every problem at once: registry_problems lists the settings' zone and each kind's.
SELECT results_eq($$SELECT kind, key, split_part(problem, ':', 1) FROM tickq.registry_problems('{
    "settings": {"timezone": "MST"},
    "kinds": {"a": {"command": ["a"], "at": ["06:00"], "timezone": "PST8PDT", "timeout": 60},
              "b": {"command": ["b"], "at": ["06:00"], "timeout": 60}}}')$$,
    $$VALUES (NULL::text, 'timezone'::text, 'MST is a legacy name'::text),
             ('a', 'timezone', 'PST8PDT is a legacy name')$$,
    'registry_problems names each key with a legacy zone');

-- An agent's schedule goes through the same parser.
SELECT throws_ok($$SELECT tickq.parse_schedule('ag', '{"at": ["06:00"], "timezone": "HST"}', 'UTC')$$,
    'TQ002', NULL, 'an agent''s zone follows the same rule');
SELECT lives_ok($$SELECT tickq.parse_schedule('ag', '{"at": ["06:00"]}', 'UTC')$$,
    'a schedule that names no zone takes the default, unjudged here');

SELECT finish();
ROLLBACK;
