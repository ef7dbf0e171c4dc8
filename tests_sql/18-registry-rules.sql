-- The registry's value rules, owned by the database: bounds on every number (one table,
-- tickq.registry_limits), the zone rule, the kind-name rule, no repeated times or days, and
-- tickq.registry_problems listing every problem at once by the same rules.
BEGIN;
SELECT plan(32);

-- Bounds: refused by the sync naming the bound, and by the table behind its back.
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"slots": 2147483647}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "slots": must be a whole number from 1 to 1000, got 2147483647',
    'slots = 2^31-1 is refused cleanly');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"slots": 1e30}, "kinds": {}}')$$,
    'TQ002', NULL, 'slots beyond any integer are refused cleanly');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 60, "timeout": 60,
    "retries": 101}}}')$$,
    'TQ002', 'registry: kind "x", key "retries": must be a whole number from 0 to 100, got 101', 'retries = 101');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 60,
    "timeout": 691200}}}')$$,
    'TQ002', 'registry: kind "x", key "timeout": must be a duration from 1s to 7d, got 8d', 'a timeout of 8 days');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 1e15,
    "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "every": must be a duration from 1s to 366d, got 1000000000000000s',
    'a cadence beyond an interval');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 1.5, "timeout": 60}}}')$$,
    'TQ002', NULL, 'durations are whole seconds');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"lease_margin": 0}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "lease_margin": must be a duration from 1s to 1d, got 0s',
    'lease_margin 0 is refused (as the registry file refuses "0s")');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"capacity_margin": 0.95}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "capacity_margin": must be a number from 0 to 0.9, got 0.95',
    'capacity_margin 0.95');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"keep_runs": 100001}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "keep_runs": must be a whole number from 1 to 100000, got 100001',
    'keep_runs');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"alert_timeout": 7200}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "alert_timeout": must be a duration from 1s to 1h, got 2h',
    'alert_timeout, which only the runner reads, has its bound here too');
SELECT throws_ok($$UPDATE tickq.settings SET slots = 5000$$, '23514', NULL,
    'the settings row refuses slots past the bound');
SELECT throws_ok($$INSERT INTO tickq.job_kind (name, every, timeout, retries, due_at)
    VALUES ('y', '1 minute', '1 minute', 1000, now())$$,
    '23514', 'kind "y": retries must be from 0 to 100, got 1000', 'job_kind refuses retries past the bound');
SELECT throws_ok($$INSERT INTO tickq.job_kind (name, every, timeout, due_at)
    VALUES ('y', '1 minute', '8 days', now())$$,
    '23514', NULL, 'job_kind refuses a timeout past the bound');

-- One zone rule: names of the IANA database, spelled as there.
SELECT ok(tickq.is_timezone('Europe/London') AND tickq.is_timezone('UTC') AND tickq.is_timezone('Etc/GMT+3')
    AND tickq.is_timezone('America/Argentina/Buenos_Aires'), 'IANA names are zones');
SELECT ok(NOT tickq.is_timezone('PST') AND NOT tickq.is_timezone('IST'), 'abbreviations are not');
SELECT ok(NOT tickq.is_timezone('europe/london') AND NOT tickq.is_timezone('EUROPE/LONDON')
    AND NOT tickq.is_timezone('utc'), 'nor other spellings of a name');
SELECT ok(NOT tickq.is_timezone('localtime') AND NOT tickq.is_timezone('Factory')
    AND NOT tickq.is_timezone('posixrules') AND NOT tickq.is_timezone('posix/Europe/London')
    AND NOT tickq.is_timezone('UTC+3'), 'nor the zone folder''s other files, nor POSIX strings');
SELECT is(current_setting('timezone'), (SELECT setting FROM pg_settings WHERE name = 'TimeZone'),
    'checking a zone leaves the session''s zone as it was');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"timezone": "PST"}, "kinds": {}}')$$,
    'TQ002', NULL, 'the settings zone follows the rule');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": ["06:00"],
    "timezone": "europe/london", "timeout": 60}}}')$$, 'TQ002', NULL, 'and so does a kind''s');

-- Names and repeats.
SELECT ok(tickq.kind_name_ok('send_email.v2') AND NOT tickq.kind_name_ok('Send') AND NOT tickq.kind_name_ok('-x')
    AND NOT tickq.kind_name_ok(repeat('a', 101)), 'the kind-name rule');
SELECT throws_ok($$INSERT INTO tickq.job_kind (name, every, timeout, due_at) VALUES ('Bad', '1 minute', '1 minute',
    now())$$, '23514', NULL, 'the table uses the same name rule');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": ["06:00", "06:00"],
    "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "at": times must not repeat, got ["06:00", "06:00"]',
    'a repeated time is refused, not merged');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": ["06:00"],
    "on": ["mon", "mon"], "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "on": days must not repeat, got ["mon", "mon"]', 'a repeated day too');
SELECT throws_ok($$INSERT INTO tickq.job_kind (name, at_times, timeout, due_at)
    VALUES ('y', ARRAY['06:00', '06:00']::time[], '1 minute', now())$$, '23514', NULL,
    'the table refuses repeated times');

-- Every problem at once.
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{
    "settings": {"slots": 0, "tick": 300, "timezone": "localtime", "lease_margin": 0},
    "kinds": {
        "good": {"command": ["x"], "every": 60, "timeout": 60},
        "Bad": {"command": ["x"], "every": 60, "timeout": 60},
        "many": {"command": ["x"], "every": 60, "timeout": 60, "retries": 2147483647},
        "tickq.mine": {"command": ["x"], "every": 60, "timeout": 60}
    }}')$$,
    $$VALUES
        (NULL, 'lease_margin', 'must be a duration from 1s to 1d, got 0s'),
        (NULL, 'slots', 'must be a whole number from 1 to 1000, got 0'),
        (NULL, 'timezone', 'unknown time zone "localtime" (use an IANA name spelled as in the zone database, '
            || 'such as Europe/London)'),
        ('Bad', 'name', 'a kind name is 1-100 characters of a-z, 0-9, _ . - starting with a letter or digit'),
        ('many', 'retries', 'must be a whole number from 0 to 100, got 2147483647'),
        ('tickq.mine', 'name', 'names starting with "tickq." are reserved for built-in kinds')$$,
    'registry_problems lists every setting and kind at fault');
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{
    "settings": {"retry_base": 60, "retry_max": 30}, "kinds": {}}')$$,
    $$VALUES (NULL::text, 'retry_max'::text, 'must not be shorter than retry_base (00:01:00), got 00:00:30'::text)$$,
    'and the rule between two settings');
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{"settings": {"retry_base": 7200}}')$$,
    $$VALUES (NULL::text, 'retry_max'::text, 'must not be shorter than retry_base (02:00:00), got 01:00:00'::text)$$,
    'a retry_base past the stored retry_max is charged to the rule between them');
SELECT is_empty($$SELECT * FROM tickq.registry_problems('{"settings": {"slots": 3}, "kinds": {
    "x": {"command": ["x"], "at": ["06:00"], "timezone": "Europe/London", "timeout": 60}}}')$$,
    'a good registry has no problems');
SELECT results_eq($$SELECT kind, key FROM tickq.registry_problems('[1]')$$, $$VALUES (NULL::text, '*'::text)$$,
    'a registry that is not an object');
SELECT is((SELECT count(*)::integer FROM tickq.job_kind), 0, 'and registry_problems changed nothing');
SELECT is((SELECT slots FROM tickq.settings), 3, 'not even the settings');

SELECT * FROM finish();
ROLLBACK;
