-- Weights and pools seen: who holds the global slots (one row per run, its weight), each pool's
-- occupancy and holders, the occupancy plots of the page (a run counts its weight globally, one
-- slot in each pool it names), history, the metrics, and explain naming what a kind waits for.
BEGIN;
SELECT plan(17);

-- kinds with weights and pools synced
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "stale_after": 900},
    "pools": {"salesforce": {"slots": 1}, "smb": {"slots": 2}},
    "kinds": {
        "ingest": {"command": ["x"], "every": 3600, "timeout": 600, "weight": 2, "pools": ["smb"]},
        "sf_push": {"command": ["x"], "every": 3600, "timeout": 600, "pools": ["salesforce"]},
        "sf_pull": {"command": ["x"], "every": 3600, "timeout": 600, "pools": ["salesforce", "smb"]},
        "big": {"command": ["x"], "every": 3600, "timeout": 600, "weight": 2},
        "light": {"command": ["x"], "every": 3600, "timeout": 600}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = CASE name
    WHEN 'tickq.housekeeping' THEN 'infinity'::timestamptz
    WHEN 'ingest' THEN '2026-06-01 10:00Z' WHEN 'sf_push' THEN '2026-06-01 10:00Z'
    ELSE '2026-06-01 11:00Z'
END;

SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'host:1', '2026-06-01 10:00Z') ORDER BY kind$$,
    $$VALUES ('ingest'), ('sf_push')$$, 'ingest (weight 2) and sf_push take the three slots');

SELECT results_eq($$SELECT kind, weight, pools, dispatcher
    FROM tickq.slot_holders_at('2026-06-01 10:05Z') ORDER BY kind$$,
    $$VALUES ('ingest', 2, '{smb}'::text[], 'host:1'), ('sf_push', 1, '{salesforce}', 'host:1')$$,
    'one row per run holding global slots, with its weight and pools');

SELECT results_eq($$SELECT pool, slots, busy, free, kinds, holders -> 0 ->> 'kind'
    FROM tickq.pool_occupancy_at('2026-06-01 10:05Z')$$,
    $$VALUES ('salesforce', 1, 1, 0, 2, 'sf_push'), ('smb', 2, 1, 1, 2, 'ingest')$$,
    'each pool: slots, busy, free, the kinds naming it and who holds it');

SELECT results_eq($$SELECT kind, weight, pools FROM tickq.queue_status
    WHERE kind IN ('ingest', 'light') ORDER BY kind$$,
    $$VALUES ('ingest', 2, '{smb}'::text[]), ('light', 1, '{}')$$, 'queue_status shows weight and pools');

SELECT results_eq($$SELECT weight, pools FROM tickq.kind_history('ingest', 5, '2026-06-01 10:05Z')$$,
    $$VALUES (2, '{smb}'::text[])$$, 'history: the run''s weight and pools');

SELECT results_eq($$SELECT d.weight, d.pools FROM tickq.job_run AS r, tickq.run_detail(r.id, '2026-06-01 10:05Z') AS d
    WHERE r.kind = 'sf_push'$$,
    $$VALUES (1, '{salesforce}'::text[])$$, 'one run: its weight and pools');

-- 11:10: the others are due; the three slots and the salesforce pool are held.
SELECT results_eq($$SELECT (e -> 'queue' ->> 'weight')::integer, (e -> 'queue' ->> 'slots_free')::integer,
        jsonb_array_length(e -> 'queue' -> 'holders')
    FROM tickq.explain_kind('big', '2026-06-01 11:10Z') AS e$$,
    $$VALUES (2, 0, 2)$$, 'explain: the weight, no slot free, two runs hold the three slots');
SELECT results_eq($$SELECT p ->> 'pool', (p ->> 'free')::integer, p -> 'holders' -> 0 ->> 'kind'
    FROM tickq.explain_kind('sf_pull', '2026-06-01 11:10Z') AS e,
        jsonb_array_elements(e -> 'queue' -> 'pools') AS p$$,
    $$VALUES ('salesforce', 0, 'sf_push'), ('smb', 1, 'ingest')$$,
    'explain: each pool the kind names, the full one held by sf_push');

SELECT ok(tickq.metrics_text('2026-06-01 10:05Z')
    ~ E'\ntickq_slots_used 3\n.*\ntickq_kind_weight\\{kind="ingest"\\} 2\n'
      '.*\ntickq_pool_slots\\{pool="salesforce"\\} 1\n'
      '.*\ntickq_pool_slots_used\\{pool="salesforce"\\} 1\n.*\ntickq_pool_slots_free\\{pool="smb"\\} 1\n',
    'metrics: slots used by weight, each kind''s weight, each pool''s slots, used and free');

SELECT results_eq($$SELECT pool, busy, jsonb_array_length(holders)
    FROM tickq.report_pools_at(1, 60, 8, 0, '2026-06-01 10:05Z')$$,
    $$VALUES ('salesforce', 1, 0), ('smb', 1, 0)$$,
    'the page''s pools name at most p_holders runs; busy counts them all');

-- ingest ends at 10:30, sf_push at 10:40: the plots count ingest's weight globally.
-- both runs end
SELECT tickq.report_run(r.id, 'host:1', 'ok', 0, '', NULL,
        CASE r.kind WHEN 'ingest' THEN '2026-06-01 10:30Z'::timestamptz ELSE '2026-06-01 10:40Z' END)
    FROM tickq.job_run AS r WHERE r.outcome = 'running';
SELECT results_eq($$SELECT max(in_use), max(in_use) FILTER (WHERE step_start > '2026-06-01 10:30Z')
    FROM tickq.report_slots_at(1, 60, '2026-06-01 11:00Z')$$,
    $$VALUES (3, 1)$$, 'global plot: weight 2 plus 1, then sf_push''s one alone');
SELECT results_eq($$SELECT pool, peak, busy, drawn, jsonb_array_length(steps)
    FROM tickq.report_pools_at(1, 60, 8, 3, '2026-06-01 11:00Z')$$,
    $$VALUES ('salesforce', 1, 0, true, 60), ('smb', 1, 0, true, 60)$$,
    'pool plots: one slot each at the peak, none now');
SELECT results_eq($$SELECT pool, drawn, steps IS NULL FROM tickq.report_pools_at(1, 60, 1, 3, '2026-06-01 11:00Z')$$,
    $$VALUES ('salesforce', true, false), ('smb', false, true)$$,
    'only the first p_limit pools carry steps: the page stays bounded');

-- Capacity held: hold and sfhold run (2 of 3 slots, pool sf full); big (weight 3) and both
-- (pools sf and smb) have waited past half of stale_after and cannot fit, so the claim holds
-- big's weight and both's pools; tiny and small are due and would fit, but wait for what is held.
-- a registry where kinds waiting long do not fit
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "stale_after": 900},
    "pools": {"sf": {"slots": 1}, "smb": {"slots": 2}},
    "kinds": {
        "hold": {"command": ["x"], "every": 86400, "timeout": 3000},
        "sfhold": {"command": ["x"], "every": 86400, "timeout": 3000, "pools": ["sf"]},
        "big": {"command": ["x"], "every": 86400, "timeout": 60, "weight": 3},
        "both": {"command": ["x"], "every": 86400, "timeout": 60, "pools": ["sf", "smb"]},
        "small": {"command": ["x"], "every": 86400, "timeout": 60, "pools": ["smb"]},
        "tiny": {"command": ["x"], "every": 86400, "timeout": 60}
    }}', '2026-06-02 10:00Z');
UPDATE tickq.job_kind SET due_at = CASE WHEN name IN ('hold', 'sfhold') THEN '2026-06-02 10:00Z'::timestamptz
    ELSE 'infinity' END;
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'host:2', '2026-06-02 10:00Z') ORDER BY kind$$,
    $$VALUES ('hold'), ('sfhold')$$, 'hold and sfhold run');
UPDATE tickq.job_kind SET due_at = CASE WHEN name IN ('big', 'both') THEN '2026-06-02 10:00Z'::timestamptz
    ELSE '2026-06-02 10:05Z' END
WHERE name IN ('big', 'both', 'small', 'tiny');
SELECT results_eq($$SELECT w FROM tickq.explain_kind('tiny', '2026-06-02 10:10Z') AS e,
        jsonb_array_elements(e -> 'queue' -> 'waits_for') AS w$$,
    $$VALUES ('{"what": "held", "kind": "big", "weight": 3, "pools": []}'::jsonb)$$,
    '10 minutes in (past half of stale_after, not stale): tiny fits the free slot, held for big');
SELECT results_eq($$SELECT w FROM tickq.explain_kind('small', '2026-06-02 10:10Z') AS e,
        jsonb_array_elements(e -> 'queue' -> 'waits_for') AS w$$,
    $$VALUES ('{"what": "held", "kind": "big", "weight": 3, "pools": []}'::jsonb),
        ('{"what": "held", "kind": "both", "weight": 0, "pools": ["smb"]}')$$,
    'small waits for big''s weight and for pool smb, held for both');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'host:2', '2026-06-02 10:10Z')$$,
    'and the claim agrees: nothing is claimed while it holds for them');

SELECT * FROM finish();
ROLLBACK;
