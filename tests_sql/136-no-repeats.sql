-- A registry list names each value once (tickq.registry_no_repeats): the one rule behind the day
-- filters (on, days, months), the at times and a kind's pools, whatever the values' type.
BEGIN;
SELECT plan(7);

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

SELECT * FROM finish();
