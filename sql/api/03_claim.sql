-- Claiming: a dispatcher's claim of due kinds (claim_jobs) and a person's manual run
-- (claim_manual). How a run ends (report, lease expiry) is sql/api/14_finish.sql.
--
-- The slot limit is held by rows (tickq.slot, one per slot): a claim takes free slot rows with
-- FOR UPDATE SKIP LOCKED and writes its runs into them, so claims from several dispatchers run
-- side by side without ever waiting for each other, and never hold more leases than slot rows.
-- Lock order everywhere: kind row, then run row, then slot row.

CREATE OR REPLACE FUNCTION tickq.slots_left(
    p_slots integer
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
COMMENT ON FUNCTION tickq.slots_left(integer) IS
'Internal: how many free slot rows a claim may take: all of them, or while runs still hold slots '
'past a lowered limit, the limit less every busy slot (counted under the settings lock).';

-- The claim's writes: a run for each picked kind, in the matching free slot row, and the kind's
-- lease, in one statement, so one executor start for all the writes.
CREATE OR REPLACE FUNCTION tickq.claim_open_runs(
    p_picked text[],
    p_slots integer[],
    p_dispatcher text,
    p_lease interval,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, attempt integer, leased_until timestamptz, run_trigger tickq.run_trigger,
    slot_at timestamptz, first_slot_at timestamptz, slots_covered integer
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH runs AS (
        INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, due_at, slot_row,
            slot_at, first_slot_at, slots_covered, weight, pools)
        SELECT k.name, k.attempts + 1, k.next_trigger, c.n, p_dispatcher, p_now, k.due_at,
            p_slots[array_position(p_picked, k.name)],
            -- The slots covered: from the kind's due time to the last one by now (the due time
            -- when it is the only one); a retry's are its first try's, kept on the kind row.
            CASE WHEN c.n > 1 THEN tickq.last_slot(tickq.schedule_of(k), k.due_at, p_now) WHEN c.n = 1 THEN k.due_at
                WHEN k.next_trigger = 'retry' THEN k.slot_at END,
            CASE WHEN c.n > 0 THEN k.due_at WHEN k.next_trigger = 'retry' THEN k.first_slot_at END,
            CASE WHEN c.n > 0 THEN c.n WHEN k.next_trigger = 'retry' THEN k.slots_covered ELSE 0 END, k.weight, k.pools
        FROM tickq.job_kind AS k
        CROSS JOIN LATERAL (
            SELECT CASE
                WHEN k.next_trigger <> 'schedule' THEN 0
                ELSE 1 + tickq.slots_between(tickq.schedule_of(k), k.due_at, p_now)
            END AS n
            OFFSET 0  -- slots_between once per kind, not once per use of n
        ) AS c
        WHERE k.name = ANY(p_picked)
        RETURNING id, kind, attempt, run_trigger, slot_at, first_slot_at, slots_covered
    ),
    slots AS (
        -- p_picked[i] goes into slot p_slots[i] (a kind of weight w is w times in p_picked). Slot
        -- rows are found by primary key (unnested arrays would hash the slot table in a generic plan).
        UPDATE tickq.slot AS sl SET
            run_id = (SELECT r.id FROM runs AS r WHERE r.kind = p_picked[array_position(p_slots, sl.n)]),
            leased_until = p_now + p_lease
        WHERE sl.n = ANY(p_slots) AND sl.run_id IS NULL
        RETURNING sl.run_id
    ),
    leased AS (
        UPDATE tickq.job_kind AS k SET
            run_id = r.id,
            leased_by = p_dispatcher,
            leased_until = p_now + p_lease,
            attempts = r.attempt,
            slot_at = r.slot_at,
            first_slot_at = r.first_slot_at,
            slots_covered = r.slots_covered,
            updated_at = p_now
        FROM runs AS r
        INNER JOIN slots AS sl ON r.id = sl.run_id
        WHERE k.name = r.kind
        RETURNING r.id, k.name, r.attempt, k.leased_until, r.run_trigger, r.slot_at, r.first_slot_at,
            r.slots_covered
    )
    SELECT l.id, l.name, l.attempt::integer, l.leased_until, l.run_trigger, l.slot_at, l.first_slot_at,
        l.slots_covered FROM leased AS l
    ORDER BY array_position(p_picked, l.name);
END
$$;
COMMENT ON FUNCTION tickq.claim_open_runs(text[], integer[], text, interval, timestamptz) IS
'Internal, for tickq.claim_jobs: opens a run of each kind of p_picked in the slot row of p_slots at '
'the same place (a kind of weight w is w times in p_picked), leases the kind to p_dispatcher for '
'p_lease, and returns the leases in p_picked''s order; a kind whose slot row was taken meanwhile '
'gets no lease (claim_jobs counts them).';

-- claim_jobs: the settings statement, the candidates (tickq.claim_candidates), the pick
-- (tickq.claim_plain, or tickq.claim_fit once a candidate has a weight or pools), then the
-- writes (tickq.claim_open_runs) and their count. The hot path of every tick: each helper is
-- one call (bench/claim_instructions.py counts them).
--
-- Settings: one statement reads them with the three rare cases, a lease expired without a report,
-- runs still holding slots past a lowered limit, and a kind due later than its catch_up (whose
-- old slots sql/api/03_catch_up.sql skips before any is claimed). The lease also covers the claimer's
-- own registry (its longest timeout plus margin, recorded by its last sync), which may
-- differ from the one that synced last: its watchdog, not the last registry's, decides
-- how long the command may run. A claimer whose registry has no [agents] section (its last
-- sync says so) is leased no agent run, which its runner could only fail: the ranges pass
-- over agent kinds for it and leave them to a dispatcher that can run them. A claimer without
-- a row of its own synced the registry the queue last synced (a sync with nothing to do writes
-- nothing), whose answer the settings row keeps; a caller that never synced, in a queue
-- never synced since, is taken to be able to. One case is left: a dispatcher whose sync had
-- nothing to do, while another host syncs a different registry during its tick, takes that
-- registry's answer for its refills until its next tick.
--
-- Weights and pools: while no kind has a weight or pools (one probe of the empty index
-- job_kind_weighted, in the settings statement), or none of the candidates has, the claim is
-- the plain one, tickq.claim_plain (its pick takes only kinds of weight 1 without pools, as a
-- sync may have given one a weight since). When a candidate has, tickq.claim_fit (sql/api/26_pools.sql) picks: kind
-- rows, their weight in slot rows and a row of each pool, all SKIP LOCKED, with capacity held
-- for a kind waiting half of stale_after that does not fit (a stale one is always among the
-- candidates: they come first); picked then holds a kind once per slot row it takes, and the
-- pool rows are written after the runs.
CREATE OR REPLACE FUNCTION tickq.claim_jobs(
    p_limit integer,
    p_dispatcher text DEFAULT 'unnamed',
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, attempt integer, leased_until timestamptz, run_trigger tickq.run_trigger,
    slot_at timestamptz, first_slot_at timestamptz, slots_covered integer
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
    v_agents boolean;
    v_stale timestamptz;
    v_expired boolean;
    v_over_limit boolean;
    v_catch_up boolean;
    v_slots integer[];
    v_candidates text[];
    v_picked text[];
    v_leased integer;
    v_weighted boolean;
    v_kinds integer;
    v_pooled jsonb;
    v_fit record;
BEGIN
    IF p_limit IS NULL OR p_limit < 0 THEN
        RAISE EXCEPTION 'claim_jobs: p_limit must be a number >= 0, got %', p_limit
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Settings, the claimer's lease, the rare cases and weights (see above the function).
    SELECT s.slots, greatest(s.lease, d.lease), coalesce(d.agents, s.agents, true), p_now - s.stale_after,
        EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.leased_until < p_now),
        EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.n > s.slots AND sl.run_id IS NOT NULL),
        EXISTS (SELECT FROM tickq.job_kind AS w WHERE w.weight > 1 OR w.pools <> '{}'),
        EXISTS (SELECT FROM tickq.kinds_to_catch_up(p_now))  -- a kind later than its catch_up: 03_catch_up.sql
    INTO STRICT v_limit, v_lease, v_agents, v_stale, v_expired, v_over_limit, v_weighted, v_catch_up
    FROM tickq.settings AS s LEFT JOIN tickq.dispatcher AS d ON d.name = p_dispatcher;
    IF v_expired THEN PERFORM tickq.expire_leases(p_now); END IF;
    IF v_catch_up THEN PERFORM tickq.catch_up_kinds(p_dispatcher, p_now); END IF;
    v_candidates := tickq.claim_candidates(p_limit, v_agents, v_stale, p_now);
    IF cardinality(v_candidates) = 0 THEN
        RETURN;
    ELSIF v_weighted AND EXISTS (SELECT FROM tickq.job_kind AS w WHERE w.name = ANY(v_candidates)
        AND (w.weight > 1 OR w.pools <> '{}')) THEN  -- a candidate has a weight or pools
        v_fit := tickq.claim_fit(v_candidates, p_limit, v_limit, v_over_limit, v_stale, p_now);
    ELSE
        v_fit := tickq.claim_plain(v_candidates, p_limit, v_limit, v_over_limit, p_now);
    END IF;
    v_picked := v_fit.picked; v_slots := v_fit.slots; v_kinds := v_fit.kinds; v_pooled := v_fit.pooled;
    IF coalesce(cardinality(v_picked), 0) = 0 THEN  -- no free slot row, or every candidate taken
        RETURN;
    END IF;
    -- The runs, their slot rows and the leases (see above the function).
    RETURN QUERY SELECT * FROM tickq.claim_open_runs(v_picked, v_slots, p_dispatcher, v_lease, p_now);
    GET DIAGNOSTICS v_leased = ROW_COUNT;
    IF v_leased <> coalesce(v_kinds, cardinality(v_picked)) THEN
        -- Never a lease without a slot of its own: undo the whole claim rather than go over.
        RAISE EXCEPTION 'claim_jobs: % kinds picked but % leased', coalesce(v_kinds, cardinality(v_picked)), v_leased
            USING ERRCODE = 'internal_error';
    ELSIF v_pooled <> '[]' THEN  -- each pooled run into the pool rows claim_fit locked for it
        UPDATE tickq.pool_slot AS ps SET run_id = k.run_id, leased_until = k.leased_until
        FROM jsonb_to_recordset(v_pooled) AS p (kind text, pool text, n integer)
        INNER JOIN tickq.job_kind AS k ON p.kind = k.name
        WHERE ps.pool = p.pool AND ps.n = p.n;
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.claim_jobs(integer, text, timestamptz) IS
'Leases at most p_limit due, enabled, unpaused kinds to p_dispatcher and opens a run for each, each in a '
'free slot row: never more live leases than settings.slots across all dispatchers, and claims '
'never wait for each other; a kind is never leased twice. A dispatcher whose last sync had no '
'[agents] section is leased no agent run (kind agent.NAME). Order: '
'kinds due longer than stale_after first (oldest first), then priority, then oldest due time. '
'Expired leases are turned into lost runs first. Returns no command: commands come only from '
'the registry file.';

CREATE OR REPLACE FUNCTION tickq.claim_manual(
    p_kind text,
    p_dispatcher text DEFAULT 'unnamed',
    p_run_by text DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, kind text, attempt integer, leased_until timestamptz, run_trigger tickq.run_trigger,
    slot_at timestamptz, first_slot_at timestamptz, slots_covered integer
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_kind tickq.job_kind;
    v_slots integer[];
    v_pool text;
    v_n integer;
    v_pool_ns integer[] := '{}'::integer[];
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
        PERFORM tickq.unknown_kind_error(p_kind, true);
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
    -- Its weight in free slot rows and a free row of each pool it names, as a claim takes them
    -- (no capacity is held for stale kinds against a person's run).
    v_slots := ARRAY(SELECT sl.n FROM tickq.slot AS sl
        WHERE sl.run_id IS NULL AND sl.n <= v_settings.slots
        ORDER BY sl.n
        LIMIT least(v_kind.weight, tickq.slots_left(v_settings.slots))
        FOR UPDATE SKIP LOCKED);
    IF cardinality(v_slots) < v_kind.weight THEN
        RAISE EXCEPTION '%', CASE WHEN v_kind.weight = 1 THEN format('all %s slots are in use', v_settings.slots)
            ELSE format('kind "%s" needs %s of the %s slots and %s are free', p_kind, v_kind.weight,
                v_settings.slots, cardinality(v_slots)) END
            USING ERRCODE = 'TQ005', HINT = 'Try again when a run finishes.';
    END IF;
    FOREACH v_pool IN ARRAY v_kind.pools LOOP
        v_n := NULL;
        SELECT ps.n INTO v_n FROM tickq.pool_slot AS ps INNER JOIN tickq.pool AS p ON ps.pool = p.name
        WHERE ps.pool = v_pool AND ps.run_id IS NULL AND ps.n <= p.slots
        ORDER BY ps.n LIMIT least(1, tickq.pool_slots_left(v_pool))
        FOR UPDATE OF ps SKIP LOCKED;
        IF v_n IS NULL THEN
            RAISE EXCEPTION 'pool "%" is full: all % of its slots are in use', v_pool,
                (SELECT p.slots FROM tickq.pool AS p WHERE p.name = v_pool)
                USING ERRCODE = 'TQ005', HINT = 'Try again when a run finishes.',
                DETAIL = coalesce('Held by ' || (SELECT string_agg(format('run %s of kind "%s"', r.id, r.kind), ', '
                    ORDER BY r.id) FROM tickq.pool_slot AS ps INNER JOIN tickq.job_run AS r ON ps.run_id = r.id
                    WHERE ps.pool = v_pool) || '.', 'Its slots are held by claims not yet committed.');
        END IF;
        v_pool_ns := v_pool_ns || v_n;
    END LOOP;
    -- A manual run stands for no scheduled slot, and the kind keeps its due time.
    INSERT INTO tickq.job_run AS r (kind, attempt, run_trigger, slots, dispatcher, claimed_at, due_at, slot_row,
        run_by, weight, pools)
    VALUES (p_kind, v_kind.attempts + 1, 'manual', 0, p_dispatcher, p_now, p_now, v_slots[1],
        nullif(btrim(p_run_by), ''), v_kind.weight, v_kind.pools)
    RETURNING r.id INTO v_run_id;
    UPDATE tickq.slot AS sl SET run_id = v_run_id, leased_until = p_now + v_lease
    WHERE sl.n = ANY(v_slots);
    UPDATE tickq.pool_slot AS ps SET run_id = v_run_id, leased_until = p_now + v_lease
    FROM unnest(v_kind.pools, v_pool_ns) AS t (pool, n)
    WHERE ps.pool = t.pool AND ps.n = t.n;
    RETURN QUERY
    UPDATE tickq.job_kind AS k SET
        run_id = v_run_id,
        leased_by = p_dispatcher,
        leased_until = p_now + v_lease,
        attempts = v_kind.attempts + 1,
        updated_at = p_now
    WHERE k.name = p_kind
    RETURNING k.run_id, k.name, k.attempts::integer, k.leased_until, 'manual'::tickq.run_trigger,
        NULL::timestamptz, NULL::timestamptz, 0;
END
$$;
COMMENT ON FUNCTION tickq.claim_manual(text, text, text, timestamptz) IS
'A manual run: leases the named kind now, due or not, enabled or not, paused or not (a person may '
'run a disabled or paused kind by hand), counted against the slots (its weight) and its pools. '
'p_run_by is the person who started it from a terminal; an unarmed irreversible kind needs one, '
'and its successful run arms the kind. Raises TQ003 unknown kind, TQ006 already running, TQ005 '
'no free slot (or a full pool, named), TQ030 unarmed irreversible kind without a person.';

REVOKE ALL ON FUNCTION tickq.slots_left(integer) FROM public;
REVOKE ALL ON FUNCTION tickq.claim_open_runs(text[], integer[], text, interval, timestamptz) FROM public;
