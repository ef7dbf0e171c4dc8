-- "Due and waiting for a slot" is written once, tickq.kind_due: claimable (tickq.kind_claimable),
-- not running, due by p_now and not paused at p_now (a pause that has ended does not hold it).
-- queue_status's due, the page's waiting kinds, a pool's waiting kinds, explain's queue and the
-- metrics' lateness ask it.
BEGIN;
SELECT plan(3);

SELECT * FROM tickq.sync_registry('{"settings": {}, "kinds": {"a": {"command": ["true"], "every": 300,
    "timeout": 60}}}', '2026-06-01 09:58Z');
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name = 'a';

CREATE TEMP TABLE due_case (what text, change jsonb, due boolean);
INSERT INTO due_case VALUES
    ('due', '{}', true),
    ('due at p_now', '{"due_at": "2026-06-01 10:05Z"}', true),
    ('not yet due', '{"due_at": "2026-06-01 10:06Z"}', false),
    ('running', '{"run_id": 1}', false),
    ('paused', '{"paused_until": "2026-06-01 11:00Z"}', false),
    ('pause ended at p_now', '{"paused_until": "2026-06-01 10:05Z"}', true),
    ('disabled', '{"enabled": false}', false),
    ('irreversible, unarmed', '{"irreversible": true}', false),
    ('irreversible, armed', '{"irreversible": true, "armed_at": "2026-06-01 09:00Z"}', true);

SELECT results_eq(
    $$SELECT c.what, tickq.kind_due(jsonb_populate_record(k, c.change), '2026-06-01 10:05Z')
      FROM due_case AS c CROSS JOIN tickq.job_kind AS k WHERE k.name = 'a' ORDER BY 1$$,
    $$SELECT what, due FROM due_case ORDER BY 1$$,
    'due: claimable, not running, due by p_now, not paused at p_now');

SELECT is((SELECT q.due FROM tickq.queue_status_at('2026-06-01 10:05Z') AS q WHERE q.kind = 'a'),
    (SELECT tickq.kind_due(k, '2026-06-01 10:05Z') FROM tickq.job_kind AS k WHERE k.name = 'a'),
    'queue_status says due as kind_due does');

UPDATE tickq.job_kind SET paused_until = '2026-06-01 11:00Z' WHERE name = 'a';
SELECT is_empty($$SELECT * FROM tickq.report_waiting_at('2026-06-01 10:05Z') AS w WHERE w.kind = 'a'$$,
    'a paused kind is not drawn as waiting');

SELECT * FROM finish();
ROLLBACK;
