-- What "claimable" means, written once: an enabled kind that is not irreversible or has been
-- armed by a person's run. Every view and function that asks it calls tickq.kind_claimable, the
-- claim's index ranges too. What "due" means, written once beside it: tickq.kind_due, which the
-- views, the page, explain and the metrics ask; the claim spells it out in its own ranges
-- (sql/api/03_claim_pick.sql, 26_pools.sql), where the plan must match the partial indexes.

CREATE OR REPLACE FUNCTION tickq.kind_claimable(p_kind tickq.job_kind) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- One expression of an IMMUTABLE SQL function, so the planner inlines it into the query that
-- calls it: the same plan as the expression written out, which still matches the predicates of
-- the partial indexes job_kind_claimable and job_kind_catch_up (the claim's ranges).
AS $$
    SELECT p_kind.enabled AND (NOT p_kind.irreversible OR p_kind.armed_at IS NOT NULL)
$$;
COMMENT ON FUNCTION tickq.kind_claimable(tickq.job_kind) IS
'True when a schedule may run the kind: enabled, and not irreversible or armed by a person''s '
'successful run (whether it is due, running or paused is asked separately).';

CREATE OR REPLACE FUNCTION tickq.kind_due(
    p_kind tickq.job_kind,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- One expression, inlined as tickq.kind_claimable is: the same plan as the expression written out.
AS $$
    SELECT tickq.kind_claimable(p_kind) AND p_kind.run_id IS NULL AND p_kind.due_at <= p_now
        AND NOT coalesce(p_kind.paused_until > p_now, false)
$$;
COMMENT ON FUNCTION tickq.kind_due(tickq.job_kind, timestamptz) IS
'True when the kind waits for a slot at p_now: claimable (tickq.kind_claimable), not running, due '
'by p_now and not paused at p_now (a pause that has ended holds nothing back).';

CREATE OR REPLACE FUNCTION tickq.kind_held(
    p_kind tickq.job_kind,
    p_now timestamptz DEFAULT now()
) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- One expression, inlined as tickq.kind_claimable is, in the order an operator asks it.
AS $$
    SELECT CASE
        WHEN p_kind.retired_at IS NOT NULL THEN 'retired'
        WHEN p_kind.run_id IS NOT NULL THEN 'running'
        WHEN NOT p_kind.enabled THEN 'disabled'
        WHEN p_kind.irreversible AND p_kind.armed_at IS NULL THEN 'unarmed'
        WHEN p_kind.paused_until > p_now THEN 'paused'
    END
$$;
COMMENT ON FUNCTION tickq.kind_held(tickq.job_kind, timestamptz) IS
'What holds the kind back at p_now whatever its due time, the first that applies: retired, running, '
'disabled, unarmed (irreversible, never armed), paused; NULL when nothing does. The start of the '
'state tickq.queue_status_at and tickq.explain_kind give.';
