-- The shapes of a kind's and a step's values: a command is a non-empty list of non-empty strings,
-- cwd and ping_url are strings, env a table of strings, enabled, irreversible, resume and
-- continue_on_failure true or false. A kind and a chain's step are held to the same words; a key
-- left out takes its default, an explicit null is refused.
BEGIN;
SELECT plan(4);

SELECT results_eq($$SELECT p.kind, p.key, p.problem FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "a": {"command": [], "every": 60, "timeout": 10, "cwd": 3, "env": {"X": 1}, "ping_url": false,
        "enabled": "yes", "irreversible": 1},
    "b": {"steps": [{"name": "s1", "command": ["x", ""], "timeout": 5, "cwd": [], "env": [],
        "continue_on_failure": "no"}], "every": 60, "resume": 2},
    "c": {"every": 60, "timeout": 10, "cwd": null, "enabled": null, "command": ["x"]},
    "d": {"every": 60, "timeout": 10}
    }}'::jsonb, '2026-06-01 10:00Z') AS p ORDER BY 1, 2$$,
    $$VALUES
        ('a', 'command', 'must be a non-empty list of non-empty strings'),
        ('a', 'cwd', 'must be a string'),
        ('a', 'enabled', 'must be true or false, got "yes"'),
        ('a', 'env', 'must be a table of strings'),
        ('a', 'irreversible', 'must be true or false, got 1'),
        ('a', 'ping_url', 'must be a string'),
        ('b', 'resume', 'must be true or false, got 2'),
        ('b', 'steps[1].command', 'must be a non-empty list of non-empty strings'),
        ('b', 'steps[1].continue_on_failure', 'must be true or false, got "no"'),
        ('b', 'steps[1].cwd', 'must be a string'),
        ('b', 'steps[1].env', 'must be a table of strings'),
        ('c', 'cwd', 'must be a string'),
        ('c', 'enabled', 'must be true or false, got null'),
        ('d', 'command', 'must be a non-empty list of non-empty strings')$$,
    'every value of the wrong shape, of a kind and of a step, named by its key');

SELECT throws_ok($$SELECT tickq.parse_kind('e', '{"every": 60, "timeout": 10, "command": ["x"], "env": {"A": 1}}',
    'UTC')$$, 'TQ002', 'registry: kind "e", key "env": must be a table of strings',
    'the refusal names the kind and the key');

SELECT is((SELECT row(k.enabled, k.irreversible, k.registry ->> 'cwd', k.registry -> 'env' ? 'A')
    FROM tickq.parse_kind('f', '{"every": 60, "timeout": 10, "command": ["x"], "enabled": false,
        "irreversible": true, "cwd": "/srv", "env": {"A": "b"}, "ping_url": "https://example.org/p"}', 'UTC') AS k),
    row(false, true, '/srv'::text, true),
    'values of the right shape are taken');

SELECT is((SELECT row(k.enabled, k.irreversible) FROM tickq.parse_kind('g',
    '{"every": 60, "timeout": 10, "steps": [{"name": "s", "command": ["x"], "timeout": 5, "cwd": "/srv",
        "continue_on_failure": true}], "resume": true}', 'UTC') AS k),
    row(true, false),
    'a chain of well-shaped steps has no command of its own; left out, enabled is true and irreversible false');

SELECT * FROM finish();
ROLLBACK;
