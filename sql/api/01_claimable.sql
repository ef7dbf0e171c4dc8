-- What "claimable" means, written once: an enabled kind that is not irreversible or has been
-- armed by a person's run. Due, running and paused are said beside it where they matter. Every
-- view and function that asks it calls tickq.kind_claimable, the claim's index ranges too.

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
