-- Claiming, leases and reporting.
--
-- The slot limit is held by rows (tickq.slot, one per slot): a claim takes free slot rows with
-- FOR UPDATE SKIP LOCKED and writes its runs into them, so claims from several dispatchers run
-- side by side without ever waiting for each other, and never hold more leases than slot rows.
-- Lock order everywhere: kind row, then run row, then slot row.

-- finish_run returned a one-row table before; it returns one record now, so report_run calls it
-- as a plain expression rather than through a set-returning function scan.
DROP FUNCTION IF EXISTS tickq.report_run(bigint, text, tickq.outcome, integer, text, interval, timestamptz);
DROP FUNCTION IF EXISTS tickq.finish_run(bigint, tickq.outcome, integer, text, interval, timestamptz);

CREATE FUNCTION tickq.finish_run(
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
            WHEN p_outcome = 'interrupted' THEN v_run.attempt - 1
            WHEN v_failed AND v_run.attempt <= k.retries THEN v_run.attempt
            ELSE 0
        END,
        next_trigger = CASE
            WHEN p_outcome = 'interrupted' AND v_run.run_trigger = 'retry' THEN 'retry'
            WHEN v_failed AND v_run.attempt <= k.retries THEN 'retry'
            ELSE 'schedule'
        END::tickq.run_trigger,
        due_at = CASE
            -- Not the command's fault: due again at once (a manual run keeps the kind's slot).
            WHEN p_outcome = 'interrupted' THEN
                CASE WHEN v_run.run_trigger = 'manual' THEN k.due_at ELSE least(k.due_at, p_now) END
            -- Exponential backoff: retry_base, then twice that, ... capped at retry_max. Worked
            -- in seconds as a double and capped before it becomes an interval: retry_base * 2^n
            -- as an interval overflows near n = 40, and that error stopped every claim.
            WHEN v_failed AND v_run.attempt <= k.retries THEN
                p_now + make_interval(secs => least(extract(EPOCH FROM s.retry_max)::double precision,
                    extract(EPOCH FROM s.retry_base)::double precision
                        * power(2::double precision, least(v_run.attempt - 1, 60))))
            -- The next slot strictly after now: slots missed while asleep collapse into one run.
            -- A schedule with no slot ahead (none can be written today) waits a day rather than
            -- raise on due_at's NOT NULL in the middle of every claim's lease expiry.
            ELSE coalesce(tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.timezone, p_now),
                p_now + interval '1 day')
        END,
        updated_at = p_now
    FROM tickq.settings AS s
    WHERE k.name = v_run.kind
    RETURNING k.failure_streak, k.due_at, k.next_trigger INTO STRICT failure_streak, next_due_at, next_trigger;
    UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL
    WHERE sl.n = v_run.slot AND sl.run_id = p_run_id;

    run_id := v_run.id;
    kind := v_run.kind;
    outcome := v_run.outcome;
END
$$;
COMMENT ON FUNCTION tickq.finish_run(bigint, tickq.outcome, integer, text, interval, timestamptz) IS
'Internal: records how a live run ended, releases its lease and reschedules its kind (success: next '
'slot after now; failure while retries remain: exponential backoff; otherwise the next slot).';

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
        -- Expired leases are found among the slot rows; the kind's own lease decides.
        SELECT k.name, k.run_id, k.leased_by, k.leased_until
        FROM tickq.slot AS sl
        INNER JOIN tickq.job_run AS r ON sl.run_id = r.id
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
        END;
        RETURN QUERY SELECT v_kind.run_id, v_kind.name, v_kind.leased_by, v_kind.leased_until;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.expire_leases(timestamptz) IS
'Turns every run whose lease expired without a report into a lost run (a failure: it counts in '
'the streak and may retry) and makes its kind claimable again. Returns the runs it turned.';

CREATE OR REPLACE FUNCTION tickq.slots_left(
    p_slots integer,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
BEGIN
    -- Normally every free slot row up to the limit may be taken: the rows themselves keep
    -- concurrent claims apart. After the limit went down, runs may still hold slots past it;
    -- until they end, claims take the settings lock and count, so the total stays within the
    -- new limit.
    IF NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.n > p_slots AND sl.run_id IS NOT NULL) THEN
        RETURN p_slots;
    END IF;
    PERFORM FROM tickq.settings FOR UPDATE;
    RETURN greatest(0, p_slots - (SELECT count(*) FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL));
END
$$;
COMMENT ON FUNCTION tickq.slots_left(integer, timestamptz) IS
'Internal: how many free slot rows a claim may take: all of them, or while runs still hold slots '
'past a lowered limit, the limit less every busy slot (counted under the settings lock).';

-- Earlier versions leased through an internal lease_kinds(); claims now write their runs and
-- leases themselves (one function call less on every claim).
DROP FUNCTION IF EXISTS tickq.lease_kinds(text[], boolean, text, timestamptz);
DROP FUNCTION IF EXISTS tickq.lease_kinds(text[], integer[], boolean, text, timestamptz);

CREATE OR REPLACE FUNCTION tickq.claim_jobs(
    p_limit integer,
    p_dispatcher text DEFAULT 'unnamed',
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, attempt integer, leased_until timestamptz, run_trigger tickq.run_trigger
)
LANGUAGE plpgsql
-- A LIMIT taken from a parameter makes PostgreSQL re-plan every call (a generic plan assumes the
-- limit fetches 10% of the rows); the generic plans use the same index ranges.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_limit integer;
    v_lease interval;
    v_stale timestamptz;
    v_expired boolean;
    v_over_limit boolean;
    v_slots integer[];
    v_candidates text[];
    v_picked text[];
    v_leased integer;
BEGIN
    IF p_limit IS NULL OR p_limit < 0 THEN
        RAISE EXCEPTION 'claim_jobs: p_limit must be a number >= 0, got %', p_limit
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- One statement for the settings and the two rare cases: a lease expired without a report,
    -- and runs still holding slots past a lowered limit. The lease also covers the claimer's
    -- own registry (its longest timeout plus margin, recorded by its last sync), which may
    -- differ from the one that synced last: its watchdog, not the last registry's, decides
    -- how long the command may run.
    SELECT s.slots, greatest(s.lease, (SELECT d.lease FROM tickq.dispatcher AS d WHERE d.name = p_dispatcher)),
        p_now - s.stale_after,
        EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.leased_until < p_now),
        EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.n > s.slots AND sl.run_id IS NOT NULL)
    INTO STRICT v_limit, v_lease, v_stale, v_expired, v_over_limit
    FROM tickq.settings AS s;
    IF v_expired THEN
        PERFORM tickq.expire_leases(p_now);
    END IF;
    -- Free slots, each locked by this claim alone; another claim skips them and takes others.
    v_slots := ARRAY(
        SELECT sl.n FROM tickq.slot AS sl
        WHERE sl.run_id IS NULL AND sl.n <= v_limit
        ORDER BY sl.n
        LIMIT CASE WHEN v_over_limit THEN least(p_limit, tickq.slots_left(v_limit, p_now)) ELSE p_limit END
        FOR UPDATE SKIP LOCKED
    );
    IF cardinality(v_slots) = 0 THEN
        RETURN;
    END IF;

    -- Candidates, in claim order, come from one short range of job_kind_claimable per priority
    -- lane, so an empty poll and a million-row backlog cost the same four probes. Each range
    -- holds the lane's first p_limit + 4 kinds by due time, and the union is cut to the first
    -- p_limit + 4 of the whole order; reading 4 past the limit lets claims running side by
    -- side, which skip each other's locked rows, still find enough (two claims of 3 at once, or
    -- five refills of 1). Each row read past the limit costs a primary-key probe in the pick
    -- below: 8 past it made a claim of 3 about 6% dearer. A kind due longer than
    -- stale_after goes before fresher kinds of any priority (aging): while the capacity
    -- invariant holds nothing waits much past stale_after, and when it does not, every lane is
    -- late rather than the lower lanes starving. The stale kinds of a lane are the first of its
    -- range, so the oldest stale kinds of all lanes are among the rows read. An irreversible
    -- kind nobody has armed by hand is outside the index (its predicate is repeated here): a
    -- schedule never runs it, whatever its other columns say.
    -- A paused kind (tickq.pause_kind) stays in job_kind_claimable, so that a pause can end by
    -- itself without a write; the ranges read past it, which costs a heap probe per paused due kind.
    v_candidates := ARRAY(
        SELECT c.name
        FROM (
            (SELECT k.name, k.priority, k.due_at FROM tickq.job_kind AS k
                WHERE k.enabled AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
                    AND k.run_id IS NULL AND k.priority = 'urgent' AND k.due_at <= p_now
                    AND (k.paused_until IS NULL OR k.paused_until <= p_now)
                ORDER BY k.due_at, k.name LIMIT p_limit + 4)
            UNION ALL
            (SELECT k.name, k.priority, k.due_at FROM tickq.job_kind AS k
                WHERE k.enabled AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
                    AND k.run_id IS NULL AND k.priority = 'high' AND k.due_at <= p_now
                    AND (k.paused_until IS NULL OR k.paused_until <= p_now)
                ORDER BY k.due_at, k.name LIMIT p_limit + 4)
            UNION ALL
            (SELECT k.name, k.priority, k.due_at FROM tickq.job_kind AS k
                WHERE k.enabled AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
                    AND k.run_id IS NULL AND k.priority = 'normal' AND k.due_at <= p_now
                    AND (k.paused_until IS NULL OR k.paused_until <= p_now)
                ORDER BY k.due_at, k.name LIMIT p_limit + 4)
            UNION ALL
            (SELECT k.name, k.priority, k.due_at FROM tickq.job_kind AS k
                WHERE k.enabled AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
                    AND k.run_id IS NULL AND k.priority = 'low' AND k.due_at <= p_now
                    AND (k.paused_until IS NULL OR k.paused_until <= p_now)
                ORDER BY k.due_at, k.name LIMIT p_limit + 4)
        ) AS c
        ORDER BY c.due_at <= v_stale DESC, CASE WHEN c.due_at <= v_stale THEN c.due_at END,
            c.priority, c.due_at, c.name
        LIMIT p_limit + 4
    );
    IF cardinality(v_candidates) = 0 THEN
        RETURN;
    END IF;

    -- Lock in claim order. SKIP LOCKED passes over a row another claim, a report or a sync holds.
    -- A pause is checked again here: pause_kind may have committed since the candidates were read.
    v_picked := ARRAY(
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.name = ANY(v_candidates) AND k.enabled AND (NOT k.irreversible OR k.armed_at IS NOT NULL)
            AND k.run_id IS NULL AND k.due_at <= p_now
            AND (k.paused_until IS NULL OR k.paused_until <= p_now)
        ORDER BY array_position(v_candidates, k.name)
        LIMIT cardinality(v_slots)
        FOR UPDATE SKIP LOCKED
    );
    v_slots := v_slots[1:cardinality(v_picked)];
    -- Open a run for each picked kind, put it in the matching free slot row and lease the kind:
    -- one statement, so one executor start for all the writes.
    RETURN QUERY
    WITH runs AS (
        INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, due_at, slot)
        SELECT
            k.name,
            k.attempts + 1,
            k.next_trigger,
            CASE
                WHEN k.next_trigger <> 'schedule' THEN 0
                ELSE 1 + tickq.slots_between(k.every, k.every_offset, k.at_times, k.on_days, k.timezone,
                    k.due_at, p_now)
            END,
            p_dispatcher,
            p_now,
            k.due_at,
            v_slots[array_position(v_picked, k.name)]
        FROM tickq.job_kind AS k
        WHERE k.name = ANY(v_picked)
        RETURNING id, kind, attempt, run_trigger
    ),
    slots AS (
        -- v_picked[i] goes into slot v_slots[i]. Slot rows are found by primary key (a join
        -- with the arrays unnested would hash the whole slot table in a generic plan).
        UPDATE tickq.slot AS sl SET
            run_id = (SELECT r.id FROM runs AS r WHERE r.kind = v_picked[array_position(v_slots, sl.n)]),
            leased_until = p_now + v_lease
        WHERE sl.n = ANY(v_slots) AND sl.run_id IS NULL
        RETURNING sl.run_id
    ),
    leased AS (
        UPDATE tickq.job_kind AS k SET
            run_id = r.id,
            leased_by = p_dispatcher,
            leased_until = p_now + v_lease,
            attempts = r.attempt,
            updated_at = p_now
        FROM runs AS r
        INNER JOIN slots AS sl ON r.id = sl.run_id
        WHERE k.name = r.kind
        RETURNING r.id, k.name, r.attempt, k.leased_until, r.run_trigger
    )
    SELECT l.id, l.name, l.attempt::integer, l.leased_until, l.run_trigger FROM leased AS l
    ORDER BY array_position(v_picked, l.name);
    GET DIAGNOSTICS v_leased = ROW_COUNT;
    IF v_leased <> cardinality(v_picked) THEN
        -- Never a lease without a slot of its own: undo the whole claim rather than go over.
        RAISE EXCEPTION 'claim_jobs: % kinds picked but % free slots taken', cardinality(v_picked), v_leased
            USING ERRCODE = 'internal_error';
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.claim_jobs(integer, text, timestamptz) IS
'Leases at most p_limit due, enabled, unpaused kinds to p_dispatcher and opens a run for each, each in a '
'free slot row: never more live leases than settings.slots across all dispatchers, and claims '
'never wait for each other; a kind is never leased twice. Order: '
'kinds due longer than stale_after first (oldest first), then priority, then oldest due time. '
'Expired leases are turned into lost runs first. Returns no command: commands come only from '
'the registry file.';

CREATE OR REPLACE FUNCTION tickq.claim_manual(
    p_kind text,
    p_dispatcher text DEFAULT 'unnamed',
    p_run_by text DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, attempt integer, leased_until timestamptz, run_trigger tickq.run_trigger
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_kind tickq.job_kind;
    v_slot integer;
    v_run_id bigint;
    v_lease interval;
BEGIN
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    -- As in claim_jobs: the lease covers the claimer's own registry too.
    v_lease := greatest(v_settings.lease,
        (SELECT d.lease FROM tickq.dispatcher AS d WHERE d.name = p_dispatcher));
    PERFORM tickq.expire_leases(p_now);
    SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = p_kind FOR UPDATE;
    IF NOT FOUND OR v_kind.retired_at IS NOT NULL THEN
        RAISE EXCEPTION 'no kind "%" in the registry', p_kind
            USING ERRCODE = 'TQ003', HINT = 'tickq status lists the kinds.';
    END IF;
    IF v_kind.run_id IS NOT NULL THEN
        RAISE EXCEPTION 'kind "%" is already running (run %, leased by % until %)',
            p_kind, v_kind.run_id, v_kind.leased_by, v_kind.leased_until
            USING ERRCODE = 'TQ006', HINT = 'A kind never runs twice at once; wait for the run to finish.';
    END IF;
    IF v_kind.irreversible AND v_kind.armed_at IS NULL AND nullif(btrim(p_run_by), '') IS NULL THEN
        RAISE EXCEPTION 'kind "%" is irreversible and not armed: its first run needs a person', p_kind
            USING ERRCODE = 'TQ030',
            DETAIL = 'An irreversible kind is armed by one successful manual run started by a person.',
            HINT = 'Run tickq run KIND from a terminal and type the kind''s name back, '
                'or pass --yes-i-ran-this-by-hand.';
    END IF;
    SELECT sl.n INTO v_slot FROM tickq.slot AS sl
    WHERE sl.run_id IS NULL AND sl.n <= v_settings.slots
    ORDER BY sl.n
    LIMIT least(1, tickq.slots_left(v_settings.slots, p_now))
    FOR UPDATE SKIP LOCKED;
    IF v_slot IS NULL THEN
        RAISE EXCEPTION 'all % slots are in use', v_settings.slots
            USING ERRCODE = 'TQ005', HINT = 'Try again when a run finishes.';
    END IF;
    -- A manual run stands for no scheduled slot, and the kind keeps its due time.
    INSERT INTO tickq.job_run AS r (kind, attempt, run_trigger, slots, dispatcher, claimed_at, due_at, slot,
        run_by)
    VALUES (p_kind, v_kind.attempts + 1, 'manual', 0, p_dispatcher, p_now, p_now, v_slot,
        nullif(btrim(p_run_by), ''))
    RETURNING r.id INTO v_run_id;
    UPDATE tickq.slot AS sl SET run_id = v_run_id, leased_until = p_now + v_lease
    WHERE sl.n = v_slot;
    RETURN QUERY
    UPDATE tickq.job_kind AS k SET
        run_id = v_run_id,
        leased_by = p_dispatcher,
        leased_until = p_now + v_lease,
        attempts = v_kind.attempts + 1,
        updated_at = p_now
    WHERE k.name = p_kind
    RETURNING k.run_id, k.name, k.attempts::integer, k.leased_until, 'manual'::tickq.run_trigger;
END
$$;
COMMENT ON FUNCTION tickq.claim_manual(text, text, text, timestamptz) IS
'A manual run: leases the named kind now, due or not, enabled or not, paused or not (a person may '
'run a disabled or paused kind by hand), counted against the slots. p_run_by is the person who started it from a '
'terminal; an unarmed irreversible kind needs one, and its successful run arms the kind. Raises '
'TQ003 unknown kind, TQ006 already running, TQ005 no free slot, TQ030 unarmed irreversible kind '
'without a person.';

CREATE OR REPLACE FUNCTION tickq.claim_kind(
    p_kind text,
    p_dispatcher text DEFAULT 'unnamed',
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, attempt integer, leased_until timestamptz, run_trigger tickq.run_trigger
)
LANGUAGE sql
AS $$
    SELECT * FROM tickq.claim_manual(p_kind, p_dispatcher, NULL, p_now)
$$;
COMMENT ON FUNCTION tickq.claim_kind(text, text, timestamptz) IS
'A manual run nobody in particular started (tickq.claim_manual without a person): refused for an '
'unarmed irreversible kind (TQ030).';

DROP FUNCTION IF EXISTS tickq.live_run(bigint, text, timestamptz);

CREATE OR REPLACE FUNCTION tickq.live_run(
    p_run_id bigint,
    p_dispatcher text,
    p_now timestamptz DEFAULT now()
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
        RAISE EXCEPTION 'run % does not exist', p_run_id USING ERRCODE = 'TQ001';
    END IF;
    RAISE EXCEPTION 'run % of kind "%" is not live: it ended as % at %',
        p_run_id, v_run.kind, v_run.outcome, v_run.finished_at
        USING ERRCODE = 'TQ001',
        DETAIL = 'A run is reported once, and a run whose lease expired was already recorded as lost.',
        HINT = 'Nothing was changed.';
END
$$;
COMMENT ON FUNCTION tickq.live_run(bigint, text, timestamptz) IS
'Internal: locks the kind leased by a run that is still live and leased to p_dispatcher, or '
'raises TQ001 saying why not and changes nothing.';

CREATE OR REPLACE FUNCTION tickq.start_run(
    p_run_id bigint,
    p_dispatcher text,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM tickq.live_run(p_run_id, p_dispatcher, p_now);
    UPDATE tickq.job_run AS r SET started_at = p_now WHERE r.id = p_run_id;
END
$$;
COMMENT ON FUNCTION tickq.start_run(bigint, text, timestamptz) IS
'Records that the command of a live run has started (its process exists).';

CREATE FUNCTION tickq.report_run(
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
    IF p_outcome IS NULL OR p_outcome IN ('running', 'lost') THEN
        RAISE EXCEPTION 'a run is reported as ok, failed, timeout or interrupted, not %',
            coalesce(p_outcome::text, 'null')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Nothing was changed.';
    END IF;
    PERFORM tickq.live_run(p_run_id, p_dispatcher, p_now);
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
'live (already reported, lost, or leased by another dispatcher) raises TQ001 and changes nothing.';

REVOKE ALL ON FUNCTION tickq.finish_run(bigint, tickq.outcome, integer, text, interval, timestamptz)
FROM public;
REVOKE ALL ON FUNCTION tickq.live_run(bigint, text, timestamptz) FROM public;
REVOKE ALL ON FUNCTION tickq.slots_left(integer, timestamptz) FROM public;
