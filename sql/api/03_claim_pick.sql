-- The claim's pick (tickq.claim_jobs in sql/api/03_claim.sql): which kinds a claim may take,
-- in claim order, and the plain pick of free slot rows and kind rows while no candidate has a
-- weight or pools (the weighted pick, tickq.claim_fit, is sql/api/26_pools.sql's).

-- Candidates, in claim order, come from one short range of job_kind_claimable per priority
-- lane, so an empty poll and a million-row backlog cost the same four probes. Each range
-- holds the lane's first p_limit + 4 kinds by due time, and the union is cut to the first
-- p_limit + 4 of the whole order; reading 4 past the limit lets claims running side by
-- side, which skip each other's locked rows, still find enough (two claims of 3 at once, or
-- five refills of 1). Each row read past the limit costs a primary-key probe in the pick
-- that follows: 8 past it made a claim of 3 about 6% dearer. A kind due longer than
-- stale_after goes before fresher kinds of any priority (aging): while the capacity
-- invariant holds nothing waits much past stale_after, and when it does not, every lane is
-- late rather than the lower lanes starving. The stale kinds of a lane are the first of its
-- range, so the oldest stale kinds of all lanes are among the rows read. An irreversible
-- kind nobody has armed by hand is outside the index (each range asks tickq.kind_claimable,
-- which the planner inlines into the index's predicate): a schedule never runs it, whatever its
-- other columns say.
-- A paused kind (tickq.pause_kind) stays in job_kind_claimable, so that a pause can end by
-- itself without a write; the ranges read past it, which costs a heap probe per paused due kind.
CREATE OR REPLACE FUNCTION tickq.claim_candidates(
    p_limit integer,
    p_agents boolean,
    p_stale timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS text[]
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    -- Called by claim_jobs, whose plan_cache_mode (force_generic_plan) holds here too.
    RETURN ARRAY(
        SELECT c.name
        -- One range per lane: a lateral subquery per priority, each an index range with its own
        -- LIMIT (the planner runs it once per lane).
        FROM unnest(enum_range(NULL::tickq.priority)) AS lane (priority)
        CROSS JOIN LATERAL (
            SELECT k.name, k.priority, k.due_at FROM tickq.job_kind AS k
            WHERE tickq.kind_claimable(k)
                AND k.run_id IS NULL AND k.priority = lane.priority AND k.due_at <= p_now
                AND (k.paused_until IS NULL OR k.paused_until <= p_now) AND (p_agents OR k.name NOT LIKE 'agent.%')
            ORDER BY k.due_at, k.name LIMIT p_limit + 4
        ) AS c
        ORDER BY c.due_at <= p_stale DESC, CASE WHEN c.due_at <= p_stale THEN c.due_at END,
            c.priority, c.due_at, c.name
        LIMIT p_limit + 4
    );
END
$$;
COMMENT ON FUNCTION tickq.claim_candidates(integer, boolean, timestamptz, timestamptz) IS
'Internal, for tickq.claim_jobs: the names of at most p_limit + 4 kinds a claim may take now, in '
'claim order (due before p_stale first, oldest first; then lane, due time, name); agent kinds '
'only when p_agents. Reads one short index range per lane and locks nothing.';

-- Free slots, each locked by this claim alone; another claim skips them and takes others. They
-- are locked only once something is due: a claim that finds nothing locks (writes) nothing.
CREATE OR REPLACE FUNCTION tickq.claim_plain(
    OUT picked text[],
    OUT slots integer[],
    OUT kinds integer,
    OUT pooled jsonb,
    p_candidates text[],
    p_limit integer,
    p_slots integer,
    p_over_limit boolean,
    p_now timestamptz DEFAULT now()
) RETURNS record
LANGUAGE plpgsql
AS $$
BEGIN
    -- Called by claim_jobs, whose plan_cache_mode (force_generic_plan) holds here too.
    slots := ARRAY(
        SELECT sl.n FROM tickq.slot AS sl
        WHERE sl.run_id IS NULL AND sl.n <= p_slots
        ORDER BY sl.n
        LIMIT CASE WHEN p_over_limit THEN least(p_limit, tickq.slots_left(p_slots)) ELSE p_limit END
        FOR UPDATE SKIP LOCKED
    );
    IF cardinality(slots) = 0 THEN
        RETURN;
    END IF;
    -- Lock in claim order. SKIP LOCKED passes over a row another claim, a report or a sync holds.
    -- Pause and weight are checked again: pause_kind or a sync may have committed since.
    picked := ARRAY(
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.name = ANY(p_candidates) AND tickq.kind_claimable(k)
            AND k.run_id IS NULL AND k.due_at <= p_now AND k.weight = 1 AND k.pools = '{}'
            AND (k.paused_until IS NULL OR k.paused_until <= p_now)
        ORDER BY array_position(p_candidates, k.name)
        LIMIT cardinality(slots)
        FOR UPDATE SKIP LOCKED
    );
    slots := slots[1:cardinality(picked)];
    kinds := cardinality(picked);
END
$$;
COMMENT ON FUNCTION tickq.claim_plain(text[], integer, integer, boolean, timestamptz) IS
'Internal, for tickq.claim_jobs while no candidate has a weight or pools: locks up to p_limit free '
'slot rows (of the first p_slots; while runs hold rows past a lowered limit, only as many as it '
'leaves) and then as many candidates, in claim order (FOR UPDATE SKIP LOCKED both). Returns the '
'record tickq.claim_fit returns: picked kinds, their slot rows in the same order, how many, and '
'pooled (null: no pools).';

REVOKE ALL ON FUNCTION tickq.claim_candidates(integer, boolean, timestamptz, timestamptz) FROM public;
REVOKE ALL ON FUNCTION tickq.claim_plain(text[], integer, integer, boolean, timestamptz) FROM public;
