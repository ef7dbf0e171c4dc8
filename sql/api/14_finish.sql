-- How a run ends: reported by its dispatcher (start_run, report_run, both through live_run's
-- check that the run is still the reporter's), or turned into a lost run when its lease expired
-- (expire_leases, which a claim calls when a lease has expired). finish_run releases the lease
-- and reschedules the kind; expire_leases does it by hand only when finish_run fails on a kind's
-- data. Lock order as in sql/api/03_claim.sql: kind, run, slot.
--
-- finish_run returns one record, not a set, so report_run calls it as a plain expression
-- (no set-returning function scan on every report: bench/claim_instructions.py's cycle).

CREATE OR REPLACE FUNCTION tickq.finish_run(
    -- what it returns (OUT parameters first, so the time stays the last parameter)
    OUT run_id bigint,
    OUT kind text,
    OUT outcome tickq.outcome,
    OUT failure_streak integer,
    OUT next_due_at timestamptz,
    OUT next_trigger tickq.run_trigger,
    p_run_id bigint,
    p_outcome tickq.outcome,
    p_exit_code integer,
    p_output_tail text,
    p_duration interval,
    p_now timestamptz DEFAULT now()
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_run tickq.job_run;
    v_failed boolean := p_outcome IN ('failed', 'timeout', 'lost');
    v_again boolean;
BEGIN
    -- Callers have checked that the run is live and locked its kind row.
    UPDATE tickq.job_run AS r SET
        finished_at = p_now,
        outcome = p_outcome,
        exit_code = p_exit_code,
        output_tail = right(p_output_tail, 65536),
        duration = coalesce(p_duration, greatest(p_now - coalesce(r.started_at, r.claimed_at), '0'::interval))
    WHERE r.id = p_run_id
    RETURNING r.* INTO STRICT v_run;
    -- A run someone asked to cancel is never run again before its next slot, however it ended
    -- and whoever records it: its holder before it noticed (failed, timeout, interrupted), the
    -- next dispatcher on a dead holder's host or an expired lease (lost). One rule, here.
    v_again := v_run.cancel_requested_at IS NULL;
    -- A successful manual run a person started arms an irreversible kind (sql/api/08_chain.sql).
    IF p_outcome = 'ok' AND v_run.run_by IS NOT NULL THEN
        PERFORM tickq.arm_kind(v_run, p_now);
    END IF;

    UPDATE tickq.job_kind AS k SET
        run_id = NULL,
        leased_by = NULL,
        leased_until = NULL,
        last_run_id = v_run.id,
        failure_streak = CASE
            WHEN p_outcome = 'ok' THEN 0
            WHEN v_failed THEN k.failure_streak + 1
            ELSE k.failure_streak
        END,
        -- attempts counts the tries of the current slot: kept while retries remain.
        attempts = CASE
            WHEN p_outcome = 'interrupted' AND v_again THEN v_run.attempt - 1
            WHEN v_failed AND v_again AND v_run.attempt <= k.retries THEN v_run.attempt
            ELSE 0
        END,
        next_trigger = CASE
            WHEN p_outcome = 'interrupted' AND v_again AND v_run.run_trigger = 'retry' THEN 'retry'
            WHEN v_failed AND v_again AND v_run.attempt <= k.retries THEN 'retry'
            ELSE 'schedule'
        END::tickq.run_trigger,
        due_at = CASE
            -- Not the command's fault: due again at once (a manual run keeps the kind's slot).
            WHEN p_outcome = 'interrupted' AND v_again THEN
                CASE WHEN v_run.run_trigger = 'manual' THEN k.due_at ELSE least(k.due_at, p_now) END
            -- Exponential backoff: retry_base, then twice that, ... capped at retry_max. Worked
            -- in seconds as a double and capped before it becomes an interval: retry_base * 2^n
            -- as an interval overflows near n = 40, and that error stopped every claim.
            WHEN v_failed AND v_again AND v_run.attempt <= k.retries THEN
                p_now + make_interval(secs => least(extract(EPOCH FROM s.retry_max)::double precision,
                    extract(EPOCH FROM s.retry_base)::double precision
                        * power(2::double precision, least(v_run.attempt - 1, 60))))
            -- The next slot strictly after now: slots missed while asleep collapse into one run.
            -- A schedule with no slot ahead (none can be written today) waits a day rather than
            -- raise on due_at's NOT NULL in the middle of every claim's lease expiry.
            ELSE coalesce(tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, p_now),
                p_now + interval '1 day')
        END,
        updated_at = p_now
    FROM tickq.settings AS s
    WHERE k.name = v_run.kind
    RETURNING k.failure_streak, k.due_at, k.next_trigger INTO STRICT failure_streak, next_due_at, next_trigger;
    -- A run of weight 1 frees its one slot row by primary key; a heavier one every row it holds,
    -- and a pooled one its row of each pool.
    IF v_run.weight > 1 THEN
        UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id = p_run_id;
    ELSE
        UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL
        WHERE sl.n = v_run.slot_row AND sl.run_id = p_run_id;
    END IF;
    IF cardinality(v_run.pools) > 0 THEN
        UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL
        WHERE ps.pool = ANY(v_run.pools) AND ps.run_id = p_run_id;
    END IF;

    run_id := v_run.id;
    kind := v_run.kind;
    outcome := v_run.outcome;
END
$$;
COMMENT ON FUNCTION tickq.finish_run(bigint, tickq.outcome, integer, text, interval, timestamptz) IS
'Internal: records how a live run ended, releases its lease and reschedules its kind (success: next '
'slot after now; failure while retries remain: exponential backoff; otherwise the next slot). '
'Cancelled is no failure: the streak is kept, no retry, the next slot after now. A run whose '
'cancel was asked is never retried nor run again at once, whatever its outcome.';

CREATE OR REPLACE FUNCTION tickq.expire_leases(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (run_id bigint, kind text, leased_by text, leased_until timestamptz)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_kind record;
    v_error text;
BEGIN
    FOR v_kind IN
        -- Expired leases are found among the slot rows (a heavy run's first one: it holds
        -- several); the kind's own lease decides.
        SELECT k.name, k.run_id, k.leased_by, k.leased_until
        FROM tickq.slot AS sl
        INNER JOIN tickq.job_run AS r ON sl.run_id = r.id AND sl.n = r.slot_row
        INNER JOIN tickq.job_kind AS k ON r.kind = k.name
        WHERE sl.leased_until < p_now AND k.run_id = sl.run_id AND k.leased_until < p_now
        ORDER BY k.leased_until
        FOR UPDATE OF k SKIP LOCKED
    LOOP
        -- Every claim calls this when a lease expired, so an error on one kind's data would stop
        -- the claims of all kinds: such a run is still recorded as lost and its lease released,
        -- the kind waits retry_max, and the error goes to the server log.
        BEGIN
            PERFORM tickq.finish_run(v_kind.run_id, 'lost', NULL,
                format('[tickq: lease expired at %s without a report from dispatcher %s]',
                    v_kind.leased_until, v_kind.leased_by),
                NULL, p_now);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_error = MESSAGE_TEXT;
            RAISE WARNING 'tickq.expire_leases: run % of kind "%": %; released without rescheduling',
                v_kind.run_id, v_kind.name, v_error;
            UPDATE tickq.job_run AS r SET finished_at = p_now, outcome = 'lost',
                output_tail = format('[tickq: lease expired at %s without a report from dispatcher %s; %s]',
                    v_kind.leased_until, v_kind.leased_by, left(v_error, 1000))
            WHERE r.id = v_kind.run_id;
            UPDATE tickq.job_kind AS k SET run_id = NULL, leased_by = NULL, leased_until = NULL,
                last_run_id = v_kind.run_id, attempts = 0, next_trigger = 'schedule',
                due_at = p_now + s.retry_max, updated_at = p_now
            FROM tickq.settings AS s
            WHERE k.name = v_kind.name;
            UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id = v_kind.run_id;
            UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL WHERE ps.run_id = v_kind.run_id;
        END;
        RETURN QUERY SELECT v_kind.run_id, v_kind.name, v_kind.leased_by, v_kind.leased_until;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.expire_leases(timestamptz) IS
'Turns every run whose lease expired without a report into a lost run (a failure: it counts in '
'the streak and may retry, unless its cancel was asked) and makes its kind claimable again. '
'Returns the runs it turned.';

CREATE OR REPLACE FUNCTION tickq.check_reported_outcome(
    p_outcome tickq.outcome,
    p_what text
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_outcome IS NULL OR p_outcome IN ('running', 'lost', 'skipped') THEN
        RAISE EXCEPTION 'a % is reported as ok, failed, timeout, interrupted or cancelled, not %',
            p_what, coalesce(p_outcome::text, 'null')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Nothing was changed.';
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.check_reported_outcome(tickq.outcome, text) IS
'Internal: refuses (22023, naming p_what: a run or a step) an outcome a report cannot end with: '
'running, lost (the lease expiry''s), skipped (the claim''s), or null. report_run, '
'report_late_run and report_step judge by it.';

CREATE OR REPLACE FUNCTION tickq.live_run(
    p_run_id bigint,
    p_dispatcher text
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_run tickq.job_run;
    v_kind tickq.job_kind;
BEGIN
    -- A live run is the one a kind's lease points at. Lock that kind (kind before run, the
    -- order claims and lease expiry use too); the caller's UPDATE of the run locks the run.
    SELECT k.* INTO v_kind
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    WHERE r.id = p_run_id AND k.run_id = p_run_id
    FOR UPDATE OF k;
    IF FOUND AND v_kind.leased_by = p_dispatcher THEN
        RETURN;
    END IF;
    IF FOUND THEN
        RAISE EXCEPTION 'run % of kind "%" is leased by dispatcher %, not %',
            p_run_id, v_kind.name, v_kind.leased_by, p_dispatcher
            USING ERRCODE = 'TQ001', HINT = 'Nothing was changed.';
    END IF;
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = p_run_id;
    IF NOT FOUND THEN
        -- Never claimed here: a claim lost in a failover to a standby that had not received
        -- it, or a report sent to another database. Its own code: the result is kept aside.
        RAISE EXCEPTION 'run % does not exist', p_run_id USING ERRCODE = 'TQ007',
            HINT = 'Nothing was changed.';
    END IF;
    RAISE EXCEPTION 'run % of kind "%" is not live: it ended as % at %',
        p_run_id, v_run.kind, v_run.outcome, v_run.finished_at
        USING ERRCODE = 'TQ001',
        DETAIL = 'A run is reported once, and a run whose lease expired was already recorded as lost.',
        HINT = 'Nothing was changed.';
END
$$;
COMMENT ON FUNCTION tickq.live_run(bigint, text) IS
'Internal: locks the kind leased by a run that is still live and leased to p_dispatcher, or '
'raises TQ001 saying why not (TQ007 when the database has no such run) and changes nothing.';

CREATE OR REPLACE FUNCTION tickq.start_run(
    p_run_id bigint,
    p_dispatcher text,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM tickq.live_run(p_run_id, p_dispatcher);
    UPDATE tickq.job_run AS r SET started_at = p_now WHERE r.id = p_run_id;
END
$$;
COMMENT ON FUNCTION tickq.start_run(bigint, text, timestamptz) IS
'Records that the command of a live run has started (its process exists).';

CREATE OR REPLACE FUNCTION tickq.report_run(
    p_run_id bigint,
    p_dispatcher text,
    p_outcome tickq.outcome,
    p_exit_code integer DEFAULT NULL,
    p_output_tail text DEFAULT NULL,
    p_duration interval DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, outcome tickq.outcome, failure_streak integer,
    next_due_at timestamptz, next_trigger tickq.run_trigger
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_done record;
BEGIN
    PERFORM tickq.check_reported_outcome(p_outcome, 'run');
    PERFORM tickq.live_run(p_run_id, p_dispatcher);
    v_done := tickq.finish_run(p_run_id, p_outcome, p_exit_code, p_output_tail, p_duration, p_now);
    run_id := v_done.run_id;
    kind := v_done.kind;
    outcome := v_done.outcome;
    failure_streak := v_done.failure_streak;
    next_due_at := v_done.next_due_at;
    next_trigger := v_done.next_trigger;
    RETURN NEXT;
END
$$;
COMMENT ON FUNCTION tickq.report_run(bigint, text, tickq.outcome, integer, text, interval, timestamptz) IS
'Finishes a live run leased by p_dispatcher: records outcome, exit code, the last 64 KiB of output '
'and the duration, releases the lease and reschedules the kind. A report for a run that is not '
'live (already reported, lost, or leased by another dispatcher) raises TQ001, one the database never '
'had TQ007, and changes nothing.';

REVOKE ALL ON FUNCTION tickq.finish_run(bigint, tickq.outcome, integer, text, interval, timestamptz)
FROM public;
REVOKE ALL ON FUNCTION tickq.live_run(bigint, text) FROM public;
