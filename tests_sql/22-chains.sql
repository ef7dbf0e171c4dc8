-- Chains: one kind, one slot, one lease, whose timeout is the sum of its steps' (or more);
-- each step recorded by the lease holder; a retry resumes at the first step not yet ok when
-- the kind says resume; capacity and the simulator count the chain as one kind.
BEGIN;
SELECT plan(30);

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 3600, "lease_margin": 300, "retry_base": 60, "retry_max": 60},
    "kinds": {
        "core": {"every": 3600, "resume": true, "retries": 3, "steps": [
            {"name": "pull", "command": ["bin/sf", "pull"], "timeout": 600},
            {"name": "ingest", "command": ["bin/ingest"], "timeout": 900, "continue_on_failure": true},
            {"name": "push", "command": ["bin/sf", "push"], "timeout": 300}]},
        "again": {"every": 3600, "retries": 1, "timeout": 7200, "steps": [
            {"name": "a", "command": ["x"], "timeout": 60},
            {"name": "b", "command": ["x"], "timeout": 60}]},
        "plain": {"command": ["x"], "every": 3600, "timeout": 60}
    }}', '2026-06-01 10:00Z')$$, 'chains sync');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

SELECT is((SELECT timeout FROM tickq.job_kind WHERE name = 'core'), '30 minutes'::interval,
    'a chain without a timeout takes the sum of its steps''');
SELECT is((SELECT timeout FROM tickq.job_kind WHERE name = 'again'), '2 hours'::interval,
    'an explicit timeout longer than the sum is kept');
SELECT is((SELECT lease FROM tickq.settings), '2 hours 5 minutes'::interval,
    'the lease covers the longest chain');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {"c": {"every": 60, "timeout": 10,
    "steps": [{"name": "a", "command": ["x"], "timeout": 20}]}}}')$$, 'TQ002', NULL,
    'a timeout shorter than the sum of the steps is refused');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {"c": {"every": 60,
    "steps": [{"name": "a", "command": ["x"], "timeout": 20}, {"name": "a", "command": ["y"], "timeout": 5}]}}}')$$,
    'TQ002', 'registry: kind "c", key "steps": step name "a" is used twice', 'step names are unique');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {"c": {"every": 60, "command": ["x"],
    "steps": [{"name": "a", "command": ["x"], "timeout": 20}]}}}')$$, 'TQ002', NULL,
    'a kind has a command or steps, not both');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {"c": {"every": 60, "timeout": 60,
    "command": ["x"], "resume": true}}}')$$, 'TQ002', NULL, 'resume is for chains only');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": {"c": {"every": 60,
    "steps": [{"name": "a", "command": ["x"], "timeout": 20, "shell": "sh"}]}}}')$$, 'TQ002',
    'registry: kind "c", key "steps[1].shell": unknown key', 'unknown step keys are named');

-- the capacity check and the simulator see one kind with its total duration
SELECT results_eq($$SELECT kind, expected_duration, slot_share FROM tickq.capacity_at('2026-06-01 10:00Z')
    WHERE kind IN ('core', 'again') ORDER BY kind$$,
    $$VALUES ('again', '2 hours'::interval, 1.0000), ('core', '30 minutes'::interval, 0.5000)$$,
    'capacity counts a chain once, for its whole timeout');
SELECT results_eq($$SELECT kind, runs FROM tickq.simulate(3, NULL, '2026-06-01 10:00Z')
    WHERE kind = 'core'$$,
    $$VALUES ('core', 4)$$, 'the simulator runs a chain as one kind, once an hour (10:00 to 13:00)');
SELECT ok((SELECT bool_and(r.finished_at - r.claimed_at = interval '30 minutes') FROM tickq.job_run AS r
    WHERE r.kind = 'core' AND r.dispatcher = 'simulator'), 'each simulated run holds its slot for the sum');
-- back to a quiet queue
UPDATE tickq.job_kind SET run_id = NULL, leased_by = NULL, leased_until = NULL, attempts = 0,
    next_trigger = 'schedule', due_at = '2026-06-02 10:00Z';
UPDATE tickq.slot SET run_id = NULL, leased_until = NULL;
UPDATE tickq.job_run SET outcome = 'lost', finished_at = '2026-06-01 10:00Z' WHERE outcome = 'running';
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name <> 'core';

-- a run's steps: only the lease holder reports, only steps of the chain, each once
CREATE TEMP TABLE c1 AS SELECT run_id FROM tickq.claim_jobs(2, 'd1', '2026-06-02 10:00Z') WHERE kind = 'core';
SELECT is(tickq.chain_start((SELECT run_id FROM c1), 'd1'), 1, 'a first try starts at step 1');
SELECT lives_ok($$SELECT tickq.report_step((SELECT run_id FROM c1), 'd1', 1, 'pull', 'ok', 0, 'pulled',
    '2 minutes', '2026-06-02 10:02Z')$$, 'the lease holder reports a step');
SELECT throws_ok($$SELECT tickq.report_step((SELECT run_id FROM c1), 'd2', 2, 'ingest', 'ok', 0, NULL, NULL,
    '2026-06-02 10:03Z')$$, 'TQ001', NULL, 'another dispatcher cannot');
SELECT throws_ok($$SELECT tickq.report_step((SELECT run_id FROM c1), 'd1', 2, 'push', 'ok', 0, NULL, NULL,
    '2026-06-02 10:03Z')$$, 'TQ031', NULL, 'a step is reported under its own number and name');
SELECT throws_ok($$SELECT tickq.report_step((SELECT run_id FROM c1), 'd1', 1, 'pull', 'ok', 0, NULL, NULL,
    '2026-06-02 10:03Z')$$, 'TQ032', NULL, 'a step is reported once');
SELECT lives_ok($$SELECT tickq.report_step((SELECT run_id FROM c1), 'd1', 2, 'ingest', 'failed', 4,
    repeat('x', 70000), '1 minute', '2026-06-02 10:03Z')$$, 'a failed step that may continue');
SELECT lives_ok($$SELECT tickq.report_step((SELECT run_id FROM c1), 'd1', 3, 'push', 'timeout', -15, 'slow',
    '5 minutes', '2026-06-02 10:08Z')$$, 'then a step that timed out');
SELECT results_eq($$SELECT n, name, outcome::text, exit_code, finished_at - started_at, char_length(output_tail)
    FROM tickq.job_step WHERE run_id = (SELECT run_id FROM c1) ORDER BY n$$,
    $$VALUES (1, 'pull', 'ok', 0, '2 minutes'::interval, 6), (2, 'ingest', 'failed', 4, '1 minute', 65536),
        (3, 'push', 'timeout', -15, '5 minutes', 4)$$,
    'every step recorded: outcome, exit code, duration and a bounded output tail');
SELECT lives_ok($$SELECT * FROM tickq.report_run((SELECT run_id FROM c1), 'd1', 'timeout', -15, 'chain', NULL,
    '2026-06-02 10:08Z')$$, 'the chain''s run ends');
SELECT is((SELECT steps FROM tickq.queue_status_at('2026-06-02 10:09Z') WHERE kind = 'core'),
    '1/3 ok, failed at ingest, timeout at push', 'queue_status sums up the steps of the last run');

-- the retry resumes at the first step no try of this slot ended ok
CREATE TEMP TABLE c2 AS SELECT run_id, run_trigger FROM tickq.claim_jobs(2, 'd1', '2026-06-02 10:10Z')
WHERE kind = 'core';
SELECT is(tickq.chain_start((SELECT run_id FROM c2), 'd1'), 2,
    'resume = true: the retry starts at the first step not ended ok');
SELECT lives_ok($$SELECT tickq.report_step((SELECT run_id FROM c2), 'd1', 2, 'ingest', 'ok', 0, NULL, NULL,
    '2026-06-02 10:11Z')$$, 'the resumed try records its own steps');
-- that try is lost (its dispatcher died): the next one resumes after what it did
SELECT is((SELECT count(*)::int FROM tickq.expire_leases('2026-06-02 13:00Z')), 1, 'the lease expires: lost');
CREATE TEMP TABLE c3 AS SELECT run_id, run_trigger FROM tickq.claim_jobs(2, 'd1', '2026-06-02 13:10Z')
WHERE kind = 'core';
SELECT is(tickq.chain_start((SELECT run_id FROM c3), 'd1'), 3,
    'a lost try''s finished steps count: the next retry starts at step 3');
SELECT is((SELECT steps FROM tickq.queue_status_at('2026-06-02 13:11Z') WHERE kind = 'core'),
    '1/3 ok from step 2 (resumed)', 'queue_status shows where the last run resumed');

-- without resume, a retry starts over
UPDATE tickq.job_kind SET due_at = '2026-06-02 13:00Z' WHERE name = 'again';
CREATE TEMP TABLE a1 AS SELECT run_id FROM tickq.claim_jobs(1, 'd1', '2026-06-02 13:10Z') WHERE kind = 'again';
SELECT lives_ok($$SELECT tickq.report_step((SELECT run_id FROM a1), 'd1', 1, 'a', 'ok', 0, NULL, NULL,
    '2026-06-02 13:11Z'); SELECT tickq.report_step((SELECT run_id FROM a1), 'd1', 2, 'b', 'failed', 1, NULL, NULL,
    '2026-06-02 13:12Z'); SELECT * FROM tickq.report_run((SELECT run_id FROM a1), 'd1', 'failed', 1, NULL, NULL,
    '2026-06-02 13:12Z')$$, 'a chain without resume fails at its second step');
CREATE TEMP TABLE a2 AS SELECT run_id, run_trigger FROM tickq.claim_jobs(1, 'd1', '2026-06-02 13:20Z')
WHERE kind = 'again';
SELECT results_eq($$SELECT a2.run_trigger::text, tickq.chain_start(a2.run_id, 'd1') FROM a2$$,
    $$VALUES ('retry', 1)$$, 'its retry starts over at step 1');
SELECT is(tickq.chain_start((SELECT run_id FROM c3), 'd1'), 3, 'asking again answers the same');

SELECT * FROM finish();
ROLLBACK;
