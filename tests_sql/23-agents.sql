-- Agents: the caps and shapes the database refuses (through the functions and in psql alike),
-- and the one job_kind each agent owns: created, rescheduled, paused, retired with the agent.
BEGIN;
SELECT plan(29);

SELECT is_empty($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60}},
    "agents": {"priority": "high", "retries": 1, "tools": ["search_crm", "weather"]}}', '2026-01-05 12:00Z')$$,
    'a registry with an [agents] section syncs');

-- Shapes and caps refused by save_agent, each naming the field and the value.
SELECT throws_ok($$SELECT tickq.save_agent('Bad Name', '{"prompt": "x", "every": 3600}', true)$$, 'TQ040',
    'agent ''Bad Name'': name: an agent name is 1-63 characters of a-z 0-9 _ - starting with a letter or digit, '
    'got ''Bad Name''', 'a name with capitals and a space is refused, naming it');
SELECT throws_ok(format($$SELECT tickq.save_agent(%L, '{"prompt": "x", "every": 3600}', true)$$, repeat('a', 64)),
    'TQ040', NULL, 'a 64-character name is refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "every": 3600, "max_turns": 7}', true)$$, 'TQ040',
    'agent ''x'': max_turns: turns must be a whole number from 1 to 6, got 7', 'seven turns are refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "every": 3600, "max_turns": 0}', true)$$, 'TQ040',
    'agent ''x'': max_turns: turns must be a whole number from 1 to 6, got 0', 'zero turns are refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "every": 3600, "timeout": 601}', true)$$, 'TQ040',
    'agent ''x'': timeout: timeout must be from 1s to 10m (the registry''s cap), got 10m1s',
    'a watchdog over ten minutes is refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "", "every": 3600}', true)$$, 'TQ040',
    'agent ''x'': prompt: a prompt is 1 to 32768 characters, not blank, got 0 characters', 'an empty prompt');
SELECT throws_ok(format($$SELECT tickq.save_agent('x', %L, true)$$,
    jsonb_build_object('prompt', repeat('p', 32769), 'every', 3600)), 'TQ040',
    'agent ''x'': prompt: a prompt is 1 to 32768 characters, not blank, got 32769 characters', 'a huge prompt');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "every": 30}', true)$$, 'TQ040',
    'agent ''x'': every: every must be from 1m to 366d, got 30s', 'an agent every 30 seconds is refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "at": ["7:30"]}', true)$$, 'TQ040',
    'agent ''x'': at: must be a time of day "HH:MM" (00:00-23:59) or a list of them, got ["7:30"]',
    'a malformed time of day');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "at": "07:30", "timezone": "Mars/Olympus"}', true)$$,
    'TQ040', 'agent ''x'': timezone: unknown time zone "Mars/Olympus" (use an IANA name spelled as in the zone '
    || 'database, such as Europe/London)',
    'an unknown time zone');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "at": "07:30", "on": ["someday"]}', true)$$,
    'TQ040', 'agent ''x'': on: must be a list of weekdays (mon tue wed thu fri sat sun), ranges of them '
    '(mon-fri), nth weekdays (1st mon .. 5th sun) or last weekdays (last fri), got ["someday"]',
    'a bad weekday');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x"}', true)$$, 'TQ040',
    'agent ''x'': schedule: a new agent needs "every", "at" or "cron"', 'an agent needs a schedule');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "every": 3600, "tools": ["rm"]}', true)$$,
    'TQ043', 'agent ''x'': tools: the registry''s [agents.tools] has no tool ''rm'' (it offers search_crm, weather)',
    'a tool the registry does not offer is refused');
SELECT throws_ok($$SELECT tickq.save_agent('x', '{"prompt": "x", "every": 3600, "command": ["sh"]}', true)$$,
    'TQ040', 'agent ''x'': command: unknown field', 'an agent has no command field');
SELECT throws_ok($$SELECT tickq.save_agent('nobody', '{"prompt": "x"}', false)$$, 'TQ041',
    'no agent ''nobody''', 'editing an unknown agent');

-- A valid agent and its kind.
-- an agent is saved
SELECT tickq.save_agent('morning-brief', '{"prompt": "Summarise the CRM.", "at": ["07:30"],
    "on": ["mon", "tue", "wed", "thu", "fri"], "timezone": "America/Chicago", "tools": ["search_crm"],
    "owner": "ana@example.com", "max_turns": 4, "timeout": 300}', true, '2026-01-05 12:00Z');
SELECT throws_ok($$SELECT tickq.save_agent('morning-brief', '{"prompt": "x", "every": 3600}', true)$$, 'TQ042',
    'agent ''morning-brief'' already exists', 'add refuses a taken name');
SELECT results_eq($$SELECT name, priority, timeout, retries, enabled, due_at, registry FROM tickq.job_kind
    WHERE name LIKE 'agent.%'$$,
    $$VALUES ('agent.morning-brief', 'high'::tickq.priority, '5 minutes'::interval, 1, true,
        '2026-01-05 13:30Z'::timestamptz,
        jsonb_build_object('agent', (SELECT id FROM tickq.agent WHERE name = 'morning-brief'),
            'owner', 'ana@example.com'))$$,
    'one kind agent.<name>: the agents'' lane and retries, its timeout, due 07:30 Chicago, no prompt in the mirror');

-- psql edits obey the same caps, and the kind follows the row.
SELECT throws_ok($$UPDATE tickq.agent SET max_turns = 9 WHERE name = 'morning-brief'$$, 'TQ040',
    'agent ''morning-brief'': max_turns: turns must be from 1 to 6 (the registry''s cap), got 9',
    'psql cannot raise the turns past 6');
SELECT throws_ok($$UPDATE tickq.agent SET timeout = '1 hour' WHERE name = 'morning-brief'$$, 'TQ040',
    'agent ''morning-brief'': timeout: timeout must be from 1s to 10m (the registry''s cap), got 1h',
    'psql cannot raise the watchdog past 10 minutes');
SELECT throws_ok($$UPDATE tickq.agent SET name = 'evil; rm -rf /' WHERE name = 'morning-brief'$$, 'TQ040',
    NULL, 'psql cannot rename an agent to shell text');
SELECT throws_ok($$UPDATE tickq.agent SET tools = '{sh}' WHERE name = 'morning-brief'$$, 'TQ043',
    NULL, 'psql cannot give an agent a tool the registry does not offer');
SELECT throws_ok($$INSERT INTO tickq.agent (name, prompt, every, max_turns) VALUES ('y', 'p', '1 hour', 12)$$,
    'TQ040', NULL, 'psql cannot insert an agent over the caps');
UPDATE tickq.agent SET timeout = '7 minutes', at_times = '{08:00}' WHERE name = 'morning-brief';
SELECT results_eq($$SELECT timeout, at_times FROM tickq.job_kind WHERE name = 'agent.morning-brief'$$,
    $$VALUES ('7 minutes'::interval, '{08:00}'::time[])$$, 'a psql edit of the agent moves its kind');

-- The lease covers the longest agent timeout (checked at commit by the constraint trigger).
SELECT ok((SELECT lease >= '7 minutes'::interval + lease_margin FROM tickq.settings),
    'the lease covers the agent''s watchdog plus the margin');

-- Edit, pause, resume, remove.
-- an edit to an every schedule
SELECT tickq.save_agent('morning-brief', '{"every": 3600}', false, '2026-01-06 10:10Z');
SELECT results_eq($$SELECT every, at_times, due_at FROM tickq.job_kind WHERE name = 'agent.morning-brief'$$,
    $$VALUES ('1 hour'::interval, NULL::time[], '2026-01-06 11:00Z'::timestamptz)$$,
    'the kind is rescheduled to the next slot of the new schedule');
-- pause
SELECT tickq.pause_agent('morning-brief', '2026-01-06 10:20Z');
SELECT is((SELECT enabled FROM tickq.job_kind WHERE name = 'agent.morning-brief'), false,
    'a paused agent''s kind is disabled');
-- resume
SELECT tickq.resume_agent('morning-brief', '2026-01-06 15:20Z');
SELECT results_eq($$SELECT enabled, due_at FROM tickq.job_kind WHERE name = 'agent.morning-brief'$$,
    $$VALUES (true, '2026-01-06 16:00Z'::timestamptz)$$, 'resumed: enabled, due at the next slot (no catch-up)');
-- remove
SELECT tickq.remove_agent('morning-brief', '2026-01-06 16:30Z');
SELECT results_eq($$SELECT enabled, retired_at, (SELECT count(*) FROM tickq.agent)::integer FROM tickq.job_kind
    WHERE name = 'agent.morning-brief'$$,
    $$VALUES (false, '2026-01-06 16:30Z'::timestamptz, 0)$$, 'removed: the agent is gone and its kind retired');

SELECT * FROM finish();
ROLLBACK;
