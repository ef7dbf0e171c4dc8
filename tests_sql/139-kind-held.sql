-- What holds a kind back whatever its due time has one owner, tickq.kind_held (retired, running,
-- disabled, unarmed, paused, the first that applies): queue_status and explain both start their
-- state from it, so they cannot name a held kind differently.
BEGIN;
SELECT plan(9);

SELECT tickq.sync_registry('{"settings": {"timezone": "UTC"}, "kinds": {
    "plain": {"command": ["x"], "every": 300, "timeout": 60},
    "off": {"command": ["x"], "every": 300, "timeout": 60, "enabled": false},
    "risky": {"command": ["x"], "every": 300, "timeout": 60, "irreversible": true},
    "gone": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 00:00Z');
SELECT tickq.sync_registry('{"settings": {"timezone": "UTC"}, "kinds": {
    "plain": {"command": ["x"], "every": 300, "timeout": 60},
    "off": {"command": ["x"], "every": 300, "timeout": 60, "enabled": false},
    "risky": {"command": ["x"], "every": 300, "timeout": 60, "irreversible": true}}}', '2026-06-01 00:00Z');

CREATE TEMP TABLE held ON COMMIT DROP AS
SELECT k.name, tickq.kind_held(k, '2026-06-01 00:10Z') AS held FROM tickq.job_kind AS k;
SELECT is((SELECT h.held FROM held AS h WHERE h.name = 'gone'), 'retired', 'a kind gone from the registry: retired');
SELECT is((SELECT h.held FROM held AS h WHERE h.name = 'off'), 'disabled', 'enabled = false: disabled');
SELECT is((SELECT h.held FROM held AS h WHERE h.name = 'risky'), 'unarmed', 'irreversible and never armed: unarmed');
SELECT is((SELECT h.held FROM held AS h WHERE h.name = 'plain'), NULL, 'a plain kind: nothing holds it');

SELECT tickq.pause_kind('plain', '2026-06-01 01:00Z', NULL, NULL, '2026-06-01 00:05Z');
SELECT is(tickq.kind_held(k, '2026-06-01 00:10Z'), 'paused', 'paused until 01:00: paused at 00:10')
FROM tickq.job_kind AS k WHERE k.name = 'plain';
SELECT is(tickq.kind_held(k, '2026-06-01 01:00Z'), NULL, 'the pause over at 01:00: nothing')
FROM tickq.job_kind AS k WHERE k.name = 'plain';
SELECT is(tickq.kind_held(jsonb_populate_record(k, '{"run_id": 1}'), '2026-06-01 00:10Z'), 'running',
    'a run holding the kind comes before its pause')
FROM tickq.job_kind AS k WHERE k.name = 'plain';

SELECT is((SELECT q.state FROM tickq.queue_status_at('2026-06-01 00:10Z') AS q WHERE q.kind = 'risky'),
    tickq.explain_kind('risky', '2026-06-01 00:10Z') ->> 'state', 'status and explain: the same word for a held kind');
SELECT is((SELECT q.state FROM tickq.queue_status_at('2026-06-01 00:10Z') AS q WHERE q.kind = 'plain'), 'paused',
    'status of the paused kind: paused');

SELECT * FROM finish();
ROLLBACK;
