-- A short lease is the registry's to choose: longest timeout (housekeeping's included) plus the
-- margin, with no floor of its own, so a dead dispatcher's kinds come back after seconds.
BEGIN;
SELECT plan(6);

-- a registry with second-long timeouts syncs
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "lease_margin": 1, "housekeeping_timeout": 3, "retry_base": 1, "retry_max": 1},
    "kinds": {"k": {"command": ["x"], "every": 2, "timeout": 3, "retries": 1}}}', '2026-06-01 10:00Z');
SELECT is((SELECT timeout FROM tickq.job_kind WHERE name = 'tickq.housekeeping'), '3 seconds'::interval,
    'the built-in housekeeping kind takes its timeout from settings.housekeeping_timeout');
SELECT is((SELECT lease FROM tickq.settings), '4 seconds'::interval,
    'the lease is the longest timeout plus the margin: 3s + 1s, no one-minute floor');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

SELECT results_eq(
    $$SELECT kind, leased_until FROM tickq.claim_jobs(1, 'dead:1', '2026-06-01 10:00:02Z')$$,
    $$VALUES ('k', '2026-06-01 10:00:06Z'::timestamptz)$$,
    'a claim leases the kind for 4 seconds'
);
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(1, 'alive:2', '2026-06-01 10:00:05Z')$$,
    'before the lease ends nobody else may run it');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(1, 'alive:2', '2026-06-01 10:00:07Z')$$,
    'a second after the lease ran out the run is lost, and its retry waits retry_base');
SELECT results_eq(
    $$SELECT r.outcome::text, c.kind, c.run_trigger::text
      FROM tickq.claim_jobs(1, 'alive:2', '2026-06-01 10:00:08Z') AS c
      CROSS JOIN tickq.job_run AS r WHERE r.dispatcher = 'dead:1'$$,
    $$VALUES ('lost', 'k', 'retry')$$,
    'then another dispatcher runs the retry'
);

SELECT * FROM finish();
ROLLBACK;
