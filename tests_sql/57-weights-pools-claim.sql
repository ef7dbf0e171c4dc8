-- Weights and pools in the claim: a run of weight w holds w slot rows, a pooled run one row of
-- each of its pools; claim_jobs and claim_manual take a kind only when all fit; a stale kind that
-- does not fit has capacity held for it; lowering a pool's slots behaves like lowering slots;
-- reports and expired leases free every row.
BEGIN;
SELECT plan(35);

CREATE TEMPORARY TABLE reg (doc jsonb);
INSERT INTO reg VALUES ('{
    "settings": {"slots": 3},
    "pools": {"sf": {"slots": 1}, "smb": {"slots": 2}},
    "kinds": {
        "heavy": {"command": ["x"], "every": 300, "timeout": 3600, "weight": 3},
        "h2": {"command": ["x"], "every": 300, "timeout": 3600, "weight": 2, "pools": ["smb"]},
        "s1": {"command": ["x"], "every": 300, "timeout": 3600, "pools": ["smb"]},
        "p1": {"command": ["x"], "every": 300, "timeout": 3600, "pools": ["sf"]},
        "p2": {"command": ["x"], "every": 300, "timeout": 3600, "pools": ["sf", "smb"]},
        "l1": {"command": ["x"], "every": 300, "timeout": 3600},
        "l2": {"command": ["x"], "every": 300, "timeout": 3600}
    }}');
SELECT * FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity';

-- What every claim must leave true: the rows hold exactly the live runs' weights and pools.
CREATE FUNCTION pg_temp.rows_match() RETURNS boolean LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM tickq.slot WHERE run_id IS NOT NULL)
            = (SELECT coalesce(sum(r.weight), 0) FROM tickq.job_run AS r WHERE r.outcome = 'running')
        AND NOT EXISTS (SELECT FROM tickq.job_run AS r WHERE r.outcome = 'running'
            AND (SELECT count(*) FROM tickq.slot AS sl WHERE sl.run_id = r.id) <> r.weight)
        AND NOT EXISTS (SELECT FROM tickq.job_run AS r CROSS JOIN unnest(r.pools) AS p (pool)
            WHERE r.outcome = 'running'
                AND (SELECT count(*) FROM tickq.pool_slot AS ps WHERE ps.run_id = r.id AND ps.pool = p.pool) <> 1)
        AND NOT EXISTS (SELECT FROM tickq.pool_slot AS ps LEFT JOIN tickq.job_run AS r ON ps.run_id = r.id
            WHERE ps.run_id IS NOT NULL AND (r.outcome IS DISTINCT FROM 'running' OR NOT ps.pool = ANY(r.pools)))
$$;
CREATE FUNCTION pg_temp.done(p_kind text, p_at timestamptz) RETURNS void LANGUAGE sql AS $$
    SELECT NULL FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = p_kind), 'd1', 'ok', 0,
        NULL, NULL, p_at);
    UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = p_kind;
$$;

SELECT results_eq($$SELECT name, slots FROM tickq.pool ORDER BY 1$$, $$VALUES ('sf', 1), ('smb', 2)$$,
    'the pools and their slots');
SELECT results_eq($$SELECT pool, n::integer FROM tickq.pool_slot ORDER BY 1, 2$$,
    $$VALUES ('sf', 1), ('smb', 1), ('smb', 2)$$, 'one row per pool slot');
SELECT results_eq($$SELECT name, weight, pools FROM tickq.job_kind WHERE name IN ('heavy', 'p2', 'l1') ORDER BY 1$$,
    $$VALUES ('heavy', 3, '{}'::text[]), ('l1', 1, '{}'), ('p2', 1, '{sf,smb}')$$, 'the kinds'' weights and pools');

-- A pool of one slot is mutual exclusion.
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name IN ('p1', 'p2');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:01Z')$$, $$VALUES ('p1')$$,
    'two kinds share pool sf (slots 1): one is claimed');
SELECT results_eq($$SELECT r.weight, r.pools, ps.pool FROM tickq.job_run AS r
    JOIN tickq.pool_slot AS ps ON ps.run_id = r.id WHERE r.kind = 'p1'$$,
    $$VALUES (1, '{sf}'::text[], 'sf')$$, 'its run records its pools and holds the pool''s row');
SELECT ok(pg_temp.rows_match(), 'rows match the live runs');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('p2', 'me', NULL, '2026-06-01 10:01Z')$$, 'TQ005',
    'pool "sf" is full: all 1 of its slots are in use', 'a manual run counts against the pool, naming it');
SELECT pg_temp.done('p1', '2026-06-01 10:02Z');
SELECT is((SELECT count(*)::integer FROM tickq.pool_slot WHERE run_id IS NOT NULL), 0, 'a report frees the pool row');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:02Z')$$, $$VALUES ('p2')$$,
    'then the other is claimed');
SELECT results_eq($$SELECT pool FROM tickq.pool_slot WHERE run_id IS NOT NULL ORDER BY 1$$,
    $$VALUES ('sf'), ('smb')$$, 'holding one row of each of its pools');
SELECT pg_temp.done('p2', '2026-06-01 10:03Z');

-- A weight takes that many slot rows.
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:03Z' WHERE name = 'heavy';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:04Z' WHERE name IN ('l1', 'l2');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:05Z')$$, $$VALUES ('heavy')$$,
    'a kind of weight 3 takes all three slots: nothing else fits');
SELECT results_eq($$SELECT count(*)::integer FROM tickq.slot AS sl JOIN tickq.job_kind AS k ON k.run_id = sl.run_id
    WHERE k.name = 'heavy'$$, $$VALUES (3)$$, 'it holds three slot rows');
SELECT ok(pg_temp.rows_match(), 'rows match the live runs');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('l1', 'me', NULL, '2026-06-01 10:05Z')$$, 'TQ005',
    'all 3 slots are in use', 'a manual run finds no slot');
SELECT pg_temp.done('heavy', '2026-06-01 10:06Z');
SELECT is((SELECT count(*)::integer FROM tickq.slot WHERE run_id IS NOT NULL), 0, 'a report frees all three rows');

-- Not stale: a heavy kind that does not fit lets the lighter ones after it go.
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:06Z')$$, $$VALUES ('l1')$$, 'l1 runs');
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:03Z' WHERE name = 'heavy';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:07Z')$$, $$VALUES ('l2')$$,
    'heavy (due first, not stale) does not fit in two slots; l2 does');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('heavy', 'me', NULL, '2026-06-01 10:07Z')$$, 'TQ005',
    'kind "heavy" needs 3 of the 3 slots and 1 are free', 'a manual run of weight 3 says how many it needs');
SELECT pg_temp.done('l2', '2026-06-01 10:08Z');

-- Stale: capacity is held for it. l1 still runs; two slots are free, l2 is due.
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:08Z' WHERE name = 'l2';
SELECT is_empty($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:19Z')$$,
    'heavy is stale (due 16 minutes ago): the two free slots are held for it, l2 waits');
SELECT pg_temp.done('l1', '2026-06-01 10:20Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:20Z')$$, $$VALUES ('heavy')$$,
    'once l1 ends the stale heavy kind fits, before l2');
SELECT pg_temp.done('heavy', '2026-06-01 10:21Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'l2';

-- Lowering a pool's slots while runs hold rows past it behaves like lowering slots.
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:21Z' WHERE name IN ('h2', 's1');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:22Z')$$, $$VALUES ('h2'), ('s1')$$,
    'h2 (weight 2) and s1 fill the slots and pool smb');
UPDATE reg SET doc = jsonb_set(doc, '{pools,smb,slots}', '1');
-- smb goes down to 1
SELECT * FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:23Z');
SELECT is((SELECT count(*)::integer FROM tickq.pool_slot WHERE pool = 'smb'), 2,
    'busy rows past the pool''s new limit stay until their runs end');
SELECT pg_temp.done('s1', '2026-06-01 10:24Z');
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:24Z' WHERE name = 's1';
SELECT is_empty($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:25Z')$$,
    'a row of smb is free, but h2 still holds one: the new limit of 1 is full');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('s1', 'me', NULL, '2026-06-01 10:25Z')$$, 'TQ005', NULL,
    'a manual run too');
SELECT pg_temp.done('h2', '2026-06-01 10:26Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:27Z')$$, $$VALUES ('s1')$$,
    'once h2 ends, s1 fits the new limit');

-- An expired lease frees every row of its run.
SELECT pg_temp.done('s1', '2026-06-01 10:28Z');
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:28Z' WHERE name IN ('h2', 'p1');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 10:29Z')$$, $$VALUES ('h2'), ('p1')$$,
    'h2 (weight 2, smb) and p1 (sf)');
SELECT ok(pg_temp.rows_match(), 'rows match the live runs');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name IN ('h2', 'p1');
SELECT is_empty($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 12:00Z')$$, 'their leases expire');
SELECT results_eq($$SELECT kind, outcome::text FROM tickq.job_run WHERE kind IN ('h2', 'p1') ORDER BY id DESC LIMIT 2$$,
    $$VALUES ('p1', 'lost'), ('h2', 'lost')$$, 'both runs are lost');
SELECT ok((SELECT count(*) FROM tickq.slot WHERE run_id IS NOT NULL) = 0
    AND (SELECT count(*) FROM tickq.pool_slot WHERE run_id IS NOT NULL) = 0, 'every slot and pool row is free again');

-- A kind waiting on a full pool has its other pools held once it has waited half of stale_after.
UPDATE tickq.job_kind SET due_at = '2026-06-01 12:00Z' WHERE name = 'p1';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 12:00Z')$$, $$VALUES ('p1')$$,
    'p1 holds sf');
UPDATE tickq.job_kind SET due_at = '2026-06-01 11:58Z' WHERE name = 'p2';
UPDATE tickq.job_kind SET due_at = '2026-06-01 11:59Z' WHERE name = 's1';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 12:01Z')$$, $$VALUES ('s1')$$,
    'p2 (sf and smb) has waited 3 minutes: s1 takes smb');
SELECT pg_temp.done('s1', '2026-06-01 12:02Z');
UPDATE tickq.job_kind SET due_at = '2026-06-01 11:50Z' WHERE name = 'p2';
UPDATE tickq.job_kind SET due_at = '2026-06-01 12:01Z' WHERE name = 's1';
SELECT is_empty($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 12:02Z')$$,
    'p2 has waited 12 minutes (half of stale_after is 7m30s): smb is held for it while sf is busy');
SELECT pg_temp.done('p1', '2026-06-01 12:03Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-06-01 12:03Z')$$, $$VALUES ('p2')$$,
    'once p1 ends, p2 takes sf and smb before s1');
SELECT ok(pg_temp.rows_match(), 'rows match the live runs');

SELECT * FROM finish();
ROLLBACK;
