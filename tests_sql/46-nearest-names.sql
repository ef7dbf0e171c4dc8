-- A zone with a typo is answered with the nearest zone name (the registry's value rule owns the
-- message); a value with nothing near, or an offset, gets how a zone is spelled.
BEGIN;
SELECT plan(10);

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

-- A streak of timeouts an interrupted run left standing keeps its own outcome in queue_status.
-- a kind synced
SELECT * FROM tickq.sync_registry('{"kinds": {"slow": {"command": ["x"], "every": 3600,
    "timeout": 1}}}', '2026-06-01 10:00Z');
-- two timeouts
SELECT tickq.report_run(c.run_id, 'd1', 'timeout', NULL, NULL, NULL, '2026-06-01 10:00:02Z')
FROM tickq.claim_manual('slow', 'd1', NULL, '2026-06-01 10:00:01Z') AS c;
SELECT tickq.report_run(c.run_id, 'd1', 'timeout', NULL, NULL, NULL, '2026-06-01 10:00:04Z')
FROM tickq.claim_manual('slow', 'd1', NULL, '2026-06-01 10:00:03Z') AS c;
SELECT results_eq($$SELECT last_outcome::text, failure_streak, streak_outcome::text
    FROM tickq.queue_status_at('2026-06-01 10:00:05Z') WHERE kind = 'slow'$$,
    $$VALUES ('timeout', 2, 'timeout')$$, 'a streak of timeouts is a streak of timeouts');
-- then an interrupted run
SELECT tickq.report_run(c.run_id, 'd1', 'interrupted', -2, NULL, NULL, '2026-06-01 10:00:07Z')
    FROM tickq.claim_manual('slow', 'd1', NULL, '2026-06-01 10:00:06Z') AS c;
SELECT results_eq($$SELECT last_outcome::text, failure_streak, streak_outcome::text
    FROM tickq.queue_status_at('2026-06-01 10:00:08Z') WHERE kind = 'slow'$$,
    $$VALUES ('interrupted', 2, 'timeout')$$, 'the interrupted run leaves the streak, and its outcome, standing');

-- A changed command is an edit of the registry file while the mirror is as the last sync wrote it.
SELECT results_eq($$SELECT field, registry_edit FROM tickq.sync_registry('{"kinds": {"slow": {"command": ["y"],
    "every": 3600, "timeout": 1}}}', '2026-06-01 10:01Z') WHERE kind = 'slow'$$,
    $$VALUES ('command', true)$$, 'a new command in the file is a registry edit');
UPDATE tickq.job_kind SET registry = jsonb_set(registry, '{command}', '["z"]') WHERE name = 'slow';
SELECT results_eq($$SELECT field, registry_edit FROM tickq.sync_registry('{"kinds": {"slow": {"command": ["y"],
    "every": 3600, "timeout": 1}}}', '2026-06-01 10:02Z') WHERE kind = 'slow'$$,
    $$VALUES ('command', false)$$, 'a command changed in the mirror behind the registry''s back is not');

SELECT * FROM finish();
ROLLBACK;
