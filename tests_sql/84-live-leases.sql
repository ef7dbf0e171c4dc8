-- live_leases: of the runs a tick kept reports of, those still live with the lease each holds
-- (a report an asynchronous failover lost); a run reported or lost is not live. It only reads.
BEGIN;
SELECT plan(3);

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 600},
        "b": {"command": ["x"], "every": 3600, "timeout": 600}
    }}', '2026-06-01 10:00Z')$$, 'two kinds synced');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name <> 'tickq.housekeeping';
CREATE TEMPORARY TABLE claimed AS
SELECT c.run_id, c.kind, c.leased_until FROM tickq.claim_jobs(2, 'host:1', '2026-06-01 10:01Z') AS c;
SELECT tickq.report_run((SELECT c.run_id FROM claimed AS c WHERE c.kind = 'b'), 'host:1', 'ok',
    0, NULL, NULL, '2026-06-01 10:02Z');

SELECT results_eq(
    $$SELECT l.run_id, l.kind, l.leased_by, l.leased_until
      FROM tickq.live_leases((SELECT array_agg(c.run_id) || 987654::bigint FROM claimed AS c)) AS l$$,
    $$SELECT c.run_id, c.kind, 'host:1', c.leased_until FROM claimed AS c WHERE c.kind = 'a'$$,
    'only the live run, with its holder and lease; a reported one and an unknown id are not');
SELECT is(
    (SELECT p.provolatile::text FROM pg_proc AS p
     WHERE p.oid = 'tickq.live_leases(bigint[])'::regprocedure),
    's', 'a STABLE function: it can lock or write nothing');

SELECT * FROM finish();
ROLLBACK;
