-- What `tickq history` shows: a kind's last runs, and one run with its whole output tail. Both
-- read a kind's runs by job_run_kind_id or one run by primary key, never the whole history.

CREATE OR REPLACE FUNCTION tickq.kind_history(
    p_kind text,
    p_limit integer DEFAULT 20,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint,
    run_trigger tickq.run_trigger,
    attempt integer,
    due_at timestamptz,
    claimed_at timestamptz,
    started_at timestamptz,
    finished_at timestamptz,
    waited interval,
    duration interval,
    outcome tickq.outcome,
    exit_code integer,
    slots_merged integer,
    dispatcher text,
    slot_at timestamptz,
    first_slot_at timestamptz,
    slots_covered integer,
    weight integer,
    pools text[]
)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
BEGIN
    IF NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.name = p_kind) THEN
        PERFORM tickq.unknown_kind_error(p_kind, false);
    END IF;
    RETURN QUERY
    SELECT r.id, r.run_trigger, r.attempt::integer, r.due_at, r.claimed_at, r.started_at,
        r.finished_at, r.claimed_at - r.due_at, coalesce(r.duration, p_now - r.claimed_at),
        r.outcome, r.exit_code, r.slots::integer, r.dispatcher, r.slot_at, r.first_slot_at, r.slots_covered,
        r.weight::integer, r.pools
    FROM tickq.job_run AS r
    WHERE r.kind = p_kind AND r.claimed_at <= p_now
    ORDER BY r.id DESC
    LIMIT p_limit;
END
$$;
COMMENT ON FUNCTION tickq.kind_history(text, integer, timestamptz) IS
'The last p_limit runs of a kind, newest first: trigger, attempt, due/claimed/started/finished, '
'wait, duration (so far, for a running one), outcome, exit code, slots merged, and the slots it '
'covers (latest, earliest, how many; a retry its first try''s), the global slots it took '
'(weight) and the pools it held a slot of. TQ003 for an unknown kind.';

CREATE OR REPLACE FUNCTION tickq.run_detail(
    p_run_id bigint,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint,
    kind text,
    run_trigger tickq.run_trigger,
    attempt integer,
    due_at timestamptz,
    claimed_at timestamptz,
    started_at timestamptz,
    finished_at timestamptz,
    duration interval,
    outcome tickq.outcome,
    exit_code integer,
    slots_merged integer,
    dispatcher text,
    output_tail text,
    slot_at timestamptz,
    first_slot_at timestamptz,
    slots_covered integer,
    weight integer,
    pools text[]
)
LANGUAGE sql STABLE
AS $$
    SELECT r.id, r.kind, r.run_trigger, r.attempt::integer, r.due_at, r.claimed_at, r.started_at,
        r.finished_at, coalesce(r.duration, p_now - r.claimed_at), r.outcome, r.exit_code,
        r.slots::integer, r.dispatcher, r.output_tail::text, r.slot_at, r.first_slot_at, r.slots_covered,
        r.weight::integer, r.pools
    FROM tickq.job_run AS r
    WHERE r.id = p_run_id
$$;
COMMENT ON FUNCTION tickq.run_detail(bigint, timestamptz) IS
'One run with its whole output tail, its weight and pools (tickq history --run ID); no row for '
'an unknown id.';
