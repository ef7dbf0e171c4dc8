-- A list names each value once (tickq.each_once): the rule behind every registry list
-- (tickq.registry_no_repeats: the day filters on, days, months, the at times and a kind's pools)
-- and the row triggers' own checks of a kind's and an agent's lists, whatever the values' type.
BEGIN;
SELECT plan(11);

SELECT is(tickq.registry_no_repeats(ARRAY[15, -1, 1]::smallint[], '[15, -1, 1]', 'k', 'days', 'days'),
    ARRAY[-1, 1, 15]::smallint[], 'numbers: sorted, each once');
SELECT is(tickq.registry_no_repeats(ARRAY['18:00', '06:00']::time[], '["18:00", "06:00"]', 'k', 'at', 'times'),
    ARRAY['06:00', '18:00']::time[], 'times of day: sorted');
SELECT is(tickq.registry_no_repeats(ARRAY['sf', 'gpu']::text[], '["sf", "gpu"]', 'k', 'pools', 'pools'),
    ARRAY['gpu', 'sf'], 'names: sorted');
SELECT is(tickq.registry_no_repeats(ARRAY[]::text[], '[]', 'k', 'pools', 'pools'), ARRAY[]::text[],
    'an empty list stays empty');
SELECT throws_ok($$SELECT tickq.registry_no_repeats(ARRAY['06:00', '06:00']::time[], '["06:00", "06:00"]', 'k', 'at',
    'times')$$, 'TQ002', 'registry: kind "k", key "at": times must not repeat, got ["06:00", "06:00"]',
    'a repeat is refused naming kind, key and the list as the file wrote it');
SELECT throws_ok($$SELECT tickq.parse_days('k', '{"months": ["jan", 1]}')$$, 'TQ002',
    'registry: kind "k", key "months": months must not repeat, got ["jan", 1]',
    'a month by name and by number is a repeat');
SELECT throws_ok($$SELECT tickq.parse_days('k', '{"on": ["mon-wed", "tue"]}')$$, 'TQ002',
    'registry: kind "k", key "on": days must not repeat, got ["mon-wed", "tue"]',
    'a weekday inside a range and again alone is a repeat');

SELECT is(tickq.each_once(ARRAY[3, 1, 2]), true, 'each_once: three values, none twice');
SELECT is(tickq.each_once(ARRAY['a', 'b', 'a']), false, 'each_once: a value twice');
SELECT is(tickq.each_once(ARRAY[]::integer[]), true, 'each_once: an empty list repeats nothing');
SELECT tickq.sync_registry('{"settings": {"timezone": "UTC"}, "kinds": {
    "k": {"command": ["x"], "at": "06:00", "days": [1, 15], "timeout": 60}}}', '2026-06-01 00:00Z');
SELECT throws_ok($$UPDATE tickq.job_kind SET days = '{1,15,1}' WHERE name = 'k'$$, '23514',
    'kind "k": days must be distinct days 1..31 or -1..-31, got {1,15,1}',
    'the row trigger refuses a repeated day written past the registry');

SELECT * FROM finish();
ROLLBACK;
