-- A run whose cancel was asked is never retried, whoever records its end: the next dispatcher
-- on its host releasing a dead holder's lease (lost), a claim expiring it (lost), or its holder
-- reporting it failed, timed out or interrupted before it noticed the cancel. The kind waits for
-- its next slot, as after a cancelled run; without a cancel the same ends retry as before.
BEGIN;
SELECT plan(8);

-- seven kinds with retries synced
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 7, "retry_base": 30},
    "kinds": {
        "released": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "expired": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "failed": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "timed_out": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "interrupted": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "uncancelled_failed": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "uncancelled_released": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name <> 'tickq.housekeeping';
SELECT is((SELECT count(*)::integer FROM tickq.claim_jobs(7, 'host:1', '2026-06-01 10:01Z')), 7,
    'all seven claimed by host:1');
SELECT is((SELECT count(c.run_id)::integer FROM tickq.job_kind AS k,
        LATERAL tickq.request_cancel(k.name, 'stop it', 'ann@laptop', '2026-06-01 10:02Z') AS c
    WHERE k.name NOT LIKE 'uncancelled%' AND k.name <> 'tickq.housekeeping'), 5,
    'a cancel asked of five of them');

SELECT is(tickq.release_dead_lease((SELECT run_id FROM tickq.job_kind WHERE name = 'released'),
    'host:1', '2026-06-01 10:06Z'), true, 'a dead holder''s cancelled run released');
-- the others ended by their holder or the next dispatcher
SELECT tickq.release_dead_lease((SELECT run_id FROM tickq.job_kind WHERE name = 'uncancelled_released'),
    'host:1', '2026-06-01 10:06Z');
SELECT tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'failed'), 'host:1',
    'failed', 1, NULL, NULL, '2026-06-01 10:06Z');
SELECT tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'timed_out'), 'host:1',
    'timeout', NULL, NULL, NULL, '2026-06-01 10:06Z');
SELECT tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'interrupted'), 'host:1',
    'interrupted', NULL, NULL, NULL, '2026-06-01 10:06Z');
SELECT tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'uncancelled_failed'),
    'host:1', 'failed', 1, NULL, NULL, '2026-06-01 10:06Z');
SELECT is((SELECT count(*)::integer FROM tickq.expire_leases('2026-06-01 11:30Z')), 1,
    'the last lease expired by a later claim');

SELECT results_eq($$SELECT r.kind, r.outcome::text, k.next_trigger::text, k.attempts::integer,
        k.due_at
    FROM tickq.job_run AS r INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.cancel_requested_at IS NOT NULL AND r.kind <> 'expired' ORDER BY r.kind$$,
    $$VALUES ('failed', 'failed', 'schedule', 0, '2026-06-01 11:00Z'::timestamptz),
        ('interrupted', 'interrupted', 'schedule', 0, '2026-06-01 11:00Z'::timestamptz),
        ('released', 'lost', 'schedule', 0, '2026-06-01 11:00Z'::timestamptz),
        ('timed_out', 'timeout', 'schedule', 0, '2026-06-01 11:00Z'::timestamptz)$$,
    'a cancelled run ended by its holder or released as lost waits for the next slot, no retry');
SELECT results_eq($$SELECT r.outcome::text, k.next_trigger::text, k.attempts::integer, k.due_at
    FROM tickq.job_run AS r INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.kind = 'expired'$$,
    $$VALUES ('lost', 'schedule', 0, '2026-06-01 12:00Z'::timestamptz)$$,
    'a cancelled run whose lease expired: lost, no retry, the next slot after its end');
SELECT results_eq($$SELECT r.kind, r.outcome::text, k.next_trigger::text, k.attempts::integer
    FROM tickq.job_run AS r INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.kind LIKE 'uncancelled%' ORDER BY r.kind$$,
    $$VALUES ('uncancelled_failed', 'failed', 'retry', 1), ('uncancelled_released', 'lost', 'retry', 1)$$,
    'without a cancel the same ends are retried as before');
SELECT results_eq($$SELECT k.name, k.failure_streak::integer FROM tickq.job_kind AS k
    WHERE k.name IN ('released', 'failed', 'interrupted') ORDER BY 1$$,
    $$VALUES ('failed', 1), ('interrupted', 0), ('released', 1)$$,
    'a failure is still a failure in the streak: only the retry is gone');

SELECT * FROM finish();
ROLLBACK;
