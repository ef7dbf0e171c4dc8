-- A schedule as the file writes it has one owner, tickq.schedule_entry, the inverse of
-- tickq.parse_schedule: a registry kind's canonical entry (drift) and an agent's fields (its edits,
-- agents_export) hold the same words for the same schedule.
BEGIN;
SELECT plan(8);

SELECT tickq.sync_registry('{"settings": {"timezone": "Europe/Paris"}, "kinds": {}}', '2026-06-01 10:00Z');

CREATE TEMP TABLE entry (n integer, fields jsonb) ON COMMIT DROP;
INSERT INTO entry VALUES
    (1, '{"every": 5400, "offset": 30}'),
    (2, '{"every": 60}'),
    (3, '{"at": ["06:00", "18:30"], "on": ["mon", "2nd tue", "last fri"], "days": [-1, 1], "months": ["jan", "jul"],
        "timezone": "Asia/Tokyo"}'),
    (4, '{"at": ["00:00"], "timezone": "Europe/Paris"}'),
    (5, '{"cron": "0 6 * * 1-5", "timezone": "America/New_York"}');

SELECT is(tickq.schedule_entry(tickq.parse_schedule('x', e.fields, 'UTC')), e.fields,
    format('entry %s: the file''s words of a parsed schedule are the words it was parsed from', e.n))
FROM entry AS e ORDER BY e.n;

SELECT is(tickq.schedule_entry(tickq.parse_schedule('x', '{"at": "06:00", "months": [7, 1]}', 'UTC')),
    '{"at": ["06:00"], "months": ["jan", "jul"], "timezone": "UTC"}',
    'months given as numbers are written by name, a single time as a list, the default zone named');

SELECT lives_ok($$SELECT tickq.save_agent('ag', '{"prompt": "p", "at": "07:00", "days": [-1],
    "months": [1, 7]}', true, '2026-06-01 10:00Z')$$, 'an agent on a calendar');
SELECT is(tickq.agent_entry(a) - ARRAY['prompt', 'max_turns', 'timeout', 'paused'],
    '{"at": ["07:00"], "days": [-1], "months": ["jan", "jul"], "timezone": "Europe/Paris"}',
    'an agent''s fields hold its schedule in the registry''s words')
FROM tickq.agent AS a WHERE a.name = 'ag';

SELECT * FROM finish();
ROLLBACK;
