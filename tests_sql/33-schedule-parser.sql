-- One schedule parser for registry kinds and user-built agents: the same schedule gets the same
-- verdict on both paths (a repeated time or day is refused, never merged), each path naming the
-- key in its own words (TQ002 for the registry, TQ040 for an agent).
BEGIN;
SELECT plan(9);

-- a first sync, for the queue's default zone
SELECT tickq.sync_registry('{"settings": {"timezone": "Europe/Paris"}, "kinds": {}}');

SELECT results_eq($$SELECT s.every, s.every_offset, s.at_times, s.on_days, s.timezone
    FROM tickq.parse_schedule('x', '{"at": ["18:00", "06:00"], "on": ["fri", "mon"]}', 'Europe/Paris') AS s$$,
    $$VALUES (NULL::interval, NULL::interval, '{06:00,18:00}'::time[], '{1,5}'::smallint[], 'Europe/Paris'::text)$$,
    'a calendar schedule: times and days sorted, the default zone');
SELECT results_eq($$SELECT s.every, s.every_offset, s.timezone
    FROM tickq.parse_schedule('x', '{"every": 900, "offset": 300}', 'Europe/Paris') AS s$$,
    $$VALUES ('15 minutes'::interval, '5 minutes'::interval, 'UTC'::text)$$, 'an every cadence with an offset');

SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": ["06:00", "06:00"],
    "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "at": times must not repeat, got ["06:00", "06:00"]',
    'a kind: a repeated time is refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "p", "at": ["06:00", "06:00"]}', true)$$,
    'TQ040', 'agent ''x'': at: times must not repeat, got ["06:00", "06:00"]',
    'an agent: a repeated time is refused too, not merged');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": "06:00",
    "on": ["mon", "mon"], "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "on": days must not repeat, got ["mon", "mon"]', 'a kind: a repeated day');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "p", "at": "06:00", "on": ["mon", "mon"]}', true)$$,
    'TQ040', 'agent ''x'': on: days must not repeat, got ["mon", "mon"]', 'an agent: a repeated day');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "p", "every": 3600, "at": "06:00"}', true)$$,
    'TQ040', 'agent ''x'': every: give exactly one of "every" or "at"', 'an agent: both every and at');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "p", "every": 3600, "on": ["mon"]}', true)$$,
    'TQ040', 'agent ''x'': on: only a calendar schedule ("at") takes this key', 'an agent: on with every');

-- An edit names only what changes: an at schedule keeps its days and zone.
-- an agent on a calendar
SELECT tickq.save_agent('brief', '{"prompt": "p", "at": "07:30", "on": ["mon"],
    "timezone": "America/Chicago"}', true);
-- new times only
SELECT tickq.save_agent('brief', '{"at": ["08:00", "07:00"]}', false);
SELECT results_eq($$SELECT a.at_times, a.on_days, a.timezone, k.at_times, k.timezone FROM tickq.agent AS a
    INNER JOIN tickq.job_kind AS k ON k.name = 'agent.' || a.name WHERE a.name = 'brief'$$,
    $$VALUES ('{07:00,08:00}'::time[], '{1}'::smallint[], 'America/Chicago'::text, '{07:00,08:00}'::time[],
        'America/Chicago'::text)$$,
    'the days and the zone stay; the kind follows through the one writer');

SELECT * FROM finish();
ROLLBACK;
