-- claim_jobs' order over many kinds in every lane: kinds due longer than stale_after first
-- (oldest first, whatever their lane), then priority, then the oldest due time, then the name.
-- Each lane holds more stale and more fresh kinds than one claim reads from it, so the order
-- must come out right from the short index ranges claim_jobs reads.
BEGIN;
SELECT plan(3);

-- 120 kinds in four lanes
SELECT * FROM tickq.sync_registry(jsonb_build_object(
    'settings', jsonb_build_object('slots', 200, 'stale_after', 900),
    'kinds', (SELECT jsonb_object_agg(format('k%s', lpad(i::text, 3, '0')), jsonb_build_object(
        'command', jsonb_build_array('x'), 'every', 300, 'timeout', 60,
        'priority', (ARRAY['urgent', 'high', 'normal', 'low'])[1 + i % 4]))
        FROM generate_series(1, 120) AS i)), '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
-- Due times spread over the last hour (half stale at 11:00), scattered across lanes, with ties.
UPDATE tickq.job_kind
SET due_at = '2026-06-01 10:00Z'::timestamptz
    + make_interval(mins => (substr(name, 2)::integer * 37) % 60)
WHERE name NOT LIKE 'tickq.%';
-- Five kinds are not claimable: two disabled, three not yet due.
UPDATE tickq.job_kind SET enabled = false WHERE name IN ('k007', 'k050');
UPDATE tickq.job_kind SET due_at = '2026-06-01 11:30Z' WHERE name IN ('k003', 'k004', 'k099');

CREATE TEMP TABLE claimed (n serial, kind text);
DO $$
BEGIN
    -- claims of 1, 2 and 3 at a time until nothing is due
    FOR i IN 1..200 LOOP
        INSERT INTO claimed (kind)
        SELECT c.kind FROM tickq.claim_jobs(1 + i % 3, 'd', '2026-06-01 11:00Z') AS c;
        EXIT WHEN NOT FOUND;
    END LOOP;
END
$$;

SELECT is((SELECT count(*)::integer FROM claimed), 115, 'every due, enabled kind claimed once');
SELECT results_eq(
    $$SELECT kind FROM claimed ORDER BY n$$,
    $$SELECT k.name FROM tickq.job_kind AS k
      WHERE k.enabled AND k.due_at <= '2026-06-01 11:00Z' AND k.name NOT LIKE 'tickq.%'
      ORDER BY k.due_at <= '2026-06-01 10:45Z' DESC,
          CASE WHEN k.due_at <= '2026-06-01 10:45Z' THEN k.due_at END,
          k.priority, k.due_at, k.name$$,
    'claim order: stale first by due time across lanes, then priority, due time, name');
SELECT is(
    (SELECT count(*)::integer FROM claimed AS c
     INNER JOIN tickq.job_kind AS k ON c.kind = k.name
     WHERE k.due_at <= '2026-06-01 10:45Z' AND k.priority = 'low'
       AND c.n < (SELECT min(c2.n) FROM claimed AS c2 INNER JOIN tickq.job_kind AS k2 ON c2.kind = k2.name
                  WHERE k2.priority = 'urgent' AND k2.due_at > '2026-06-01 10:45Z')),
    (SELECT count(*)::integer FROM tickq.job_kind AS k
     WHERE k.enabled AND k.due_at <= '2026-06-01 10:45Z' AND k.priority = 'low'),
    'every stale low kind goes before the first fresh urgent kind');

SELECT * FROM finish();
ROLLBACK;
