-- The operator's everyday: dead leases released at once, pauses, the health check, and the
-- due times a tick waits for.
--
-- SQLSTATEs of this file (class TQ, range TQ060-TQ069) are listed at the top of
-- sql/api/01_schedule.sql.

CREATE OR REPLACE FUNCTION tickq.release_dead_lease(
    p_run_id bigint,
    p_dispatcher text,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_kind text;
BEGIN
    -- Only a run still live and leased by exactly that dispatcher: a run already reported, or
    -- expired and claimed again by someone else, is left alone.
    SELECT k.name INTO v_kind
    FROM tickq.job_kind AS k
    WHERE k.run_id = p_run_id AND k.leased_by = p_dispatcher
    FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM tickq.finish_run(p_run_id, 'lost', NULL,
        format('[tickq: dispatcher %s died before reporting; the next dispatcher on its host '
            'released the lease at %s]', p_dispatcher, p_now),
        NULL, p_now);
    RETURN true;
END
$$;
COMMENT ON FUNCTION tickq.release_dead_lease(bigint, text, timestamptz) IS
'Turns a live run leased by p_dispatcher into a lost run at once, as expire_leases does when '
'the lease runs out. For a dispatcher known to be dead (on its own host, its pid gone or '
'reused: the ledger of running commands tells); true if the run was released, false if it was '
'no longer live or no longer leased by p_dispatcher.';

CREATE OR REPLACE FUNCTION tickq.next_due_at(
    p_before timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- One short range of job_kind_claimable per lane, as claim_jobs reads it. Only retries:
    -- a cadence at or below the tick runs once per tick (what `tickq check` counts), while a
    -- retry's backoff is its own time, and a 30-second retry should not wait for a tick.
    SELECT least(
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'urgent' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'high' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'normal' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
            ORDER BY k.due_at LIMIT 1),
        (SELECT k.due_at FROM tickq.job_kind AS k
            WHERE k.enabled AND k.priority = 'low' AND k.due_at > p_now AND k.due_at < p_before
                AND k.run_id IS NULL AND k.next_trigger = 'retry'
            ORDER BY k.due_at LIMIT 1)
    )
$$;
COMMENT ON FUNCTION tickq.next_due_at(timestamptz, timestamptz) IS
'The earliest time after p_now and before p_before at which a retry falls due that a claim '
'could take, or NULL: a tick stays for it rather than leave it to the next tick.';
