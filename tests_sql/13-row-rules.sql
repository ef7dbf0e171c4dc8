-- The rules every row of the queue tables obeys, whoever writes it (a function or a person in
-- psql): single-column rules are domains, rules across columns are CHECK constraints. Each
-- refusal names the rule; each test changes one value of a valid row.
BEGIN;
SELECT plan(11);

-- one kind
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 10:00Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:00Z')$$, $$VALUES ('a')$$,
    'a live run to break');

SELECT throws_ok($$UPDATE tickq.job_kind SET attempts = -1 WHERE name = 'a'$$, '23514',
    'value for domain tickq.kind_attempts violates check constraint "attempts_not_negative"',
    'job_kind.attempts is never negative');
SELECT throws_ok($$UPDATE tickq.job_kind SET failure_streak = -1 WHERE name = 'a'$$, '23514',
    'value for domain tickq.failure_streak violates check constraint "failure_streak_not_negative"',
    'job_kind.failure_streak is never negative');
SELECT throws_ok($$UPDATE tickq.job_kind SET leased_by = NULL WHERE name = 'a'$$, '23514',
    'new row for relation "job_kind" violates check constraint "lease_complete"',
    'a lease has its run, holder and expiry, or none of them');
SELECT throws_ok($$UPDATE tickq.job_run SET attempt = 0 WHERE kind = 'a'$$, '23514',
    'value for domain tickq.run_attempt violates check constraint "attempt_positive"',
    'job_run.attempt starts at 1');
SELECT throws_ok($$UPDATE tickq.job_run SET slots = -1 WHERE kind = 'a'$$, '23514',
    'value for domain tickq.run_slots violates check constraint "slots_not_negative"',
    'job_run.slots is never negative');
SELECT throws_ok($$UPDATE tickq.job_run SET output_tail = repeat('x', 65537) WHERE kind = 'a'$$, '23514',
    'value for domain tickq.output_tail violates check constraint "output_tail_bounded"',
    'job_run.output_tail holds at most 65,536 characters');
SELECT throws_ok($$UPDATE tickq.job_run SET finished_at = '2026-06-01 10:01Z' WHERE kind = 'a'$$, '23514',
    'new row for relation "job_run" violates check constraint "finished_unless_running"',
    'a running run has no finish time');
SELECT throws_ok($$UPDATE tickq.slot SET n = 0 WHERE n = 2$$, '23514',
    'value for domain tickq.slot_number violates check constraint "slot_number_positive"',
    'slot numbers start at 1');

-- The rules hold at the bounds the functions use: a 65,536-character tail, attempt 1.
SELECT lives_ok($$SELECT * FROM tickq.report_run((SELECT id FROM tickq.job_run WHERE kind = 'a'), 'd1', 'ok', 0,
    repeat('y', 70000), NULL, '2026-06-01 10:01Z')$$, 'a report with 70,000 characters of output');
SELECT results_eq($$SELECT char_length(output_tail), attempt::integer, outcome::text FROM tickq.job_run$$,
    $$VALUES (65536, 1, 'ok')$$, 'keeps the last 65,536 characters');

SELECT * FROM finish();
ROLLBACK;
