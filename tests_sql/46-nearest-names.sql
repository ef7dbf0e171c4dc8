-- A zone with a typo is answered with the nearest zone name (the registry's value rule owns the
-- message); a value with nothing near, or an offset, gets how a zone is spelled.
BEGIN;
SELECT plan(6);

SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"timezone": "Europe/Berln"}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "timezone": unknown time zone "Europe/Berln"; did you mean '
    '"Europe/Berlin"?',
    'a settings zone with a typo names the zone meant');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": ["06:00"],
    "timezone": "America/New_Yrok", "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "timezone": unknown time zone "America/New_Yrok"; did you mean '
    '"America/New_York"?',
    'a kind''s zone with a typo names the zone meant');
SELECT is(tickq.unknown_zone('"Berlin"'), 'unknown time zone "Berlin"; did you mean "Europe/Berlin"?',
    'the place alone is matched against the places');
SELECT is(tickq.unknown_zone('"Mars/Olympus"'), 'unknown time zone "Mars/Olympus" (use an IANA name '
    'spelled as in the zone database, such as Europe/London)', 'nothing near: how a zone is spelled');
SELECT is(tickq.unknown_zone('"UTC+3"'), 'unknown time zone "UTC+3" (use an IANA name spelled as in '
    'the zone database, such as Europe/London)', 'an offset is no typo of a name');
SELECT is(tickq.unknown_zone('3'), 'unknown time zone 3 (use an IANA name spelled as in the zone '
    'database, such as Europe/London)', 'a value that is not text');

SELECT * FROM finish();
ROLLBACK;
