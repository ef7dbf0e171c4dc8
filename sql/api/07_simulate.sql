-- The schedule simulator: the real claim_jobs and report_run with a moved clock.

CREATE OR REPLACE FUNCTION tickq.simulate(
    p_hours numeric,
    p_durations jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    runs integer,
    longest_wait interval,
    starved boolean
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_end timestamptz := p_now + p_hours * interval '1 hour';
    v_next_tick timestamptz := p_now;
    v_t timestamptz;
    v_run_ids bigint[] := '{}'::bigint[];
    v_finish timestamptz[] := '{}'::timestamptz[];
    v_keep_ids bigint[];
    v_keep_finish timestamptz[];
    v_claim record;
    v_hold interval;
    v_due timestamptz;
BEGIN
    -- Meant for a scratch database inside a transaction the caller rolls back: it claims and
    -- reports as dispatcher 'simulator' on whatever queue it is given.
    IF p_hours IS NULL OR p_hours <= 0 THEN
        RAISE EXCEPTION 'simulate: p_hours must be positive, got %', p_hours
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    -- The question is whether the schedule fits once everything runs: each unarmed irreversible
    -- kind is armed first by a manual run through the real path, keeping its due time.
    FOR v_claim IN
        SELECT k.name AS kind, k.due_at FROM tickq.job_kind AS k
        WHERE k.irreversible AND k.armed_at IS NULL AND k.enabled AND k.run_id IS NULL
        ORDER BY k.name
    LOOP
        v_due := v_claim.due_at;
        PERFORM tickq.report_run(c.run_id, 'simulator: first run', 'ok', 0, NULL, '0'::interval, p_now)
        FROM tickq.claim_manual(v_claim.kind, 'simulator: first run', 'simulator', p_now) AS c;
        UPDATE tickq.job_kind AS k SET due_at = v_due WHERE k.name = v_claim.kind;
    END LOOP;
    -- Events in time order: every tick the OS timer wakes a dispatcher that claims the free
    -- slots; every finished run is reported and its slot claimed again at once.
    LOOP
        v_t := v_next_tick;
        FOR i IN 1..coalesce(cardinality(v_finish), 0) LOOP
            v_t := least(v_t, v_finish[i]);
        END LOOP;
        EXIT WHEN v_t > v_end;

        v_keep_ids := '{}'::bigint[];
        v_keep_finish := '{}'::timestamptz[];
        FOR i IN 1..coalesce(cardinality(v_run_ids), 0) LOOP
            IF v_finish[i] <= v_t THEN
                PERFORM tickq.report_run(v_run_ids[i], 'simulator', 'ok', 0, NULL, NULL, v_finish[i]);
            ELSE
                v_keep_ids := v_keep_ids || v_run_ids[i];
                v_keep_finish := v_keep_finish || v_finish[i];
            END IF;
        END LOOP;
        v_run_ids := v_keep_ids;
        v_finish := v_keep_finish;
        IF v_t >= v_next_tick THEN
            v_next_tick := v_next_tick + v_settings.tick;
        END IF;

        FOR v_claim IN
            SELECT c.run_id, c.kind FROM tickq.claim_jobs(v_settings.slots, 'simulator', v_t) AS c
        LOOP
            -- Each run holds its slot for its given duration, else its timeout (the worst case).
            v_hold := coalesce(
                make_interval(secs => (p_durations ->> v_claim.kind)::double precision),
                (SELECT k.timeout FROM tickq.job_kind AS k WHERE k.name = v_claim.kind));
            v_run_ids := v_run_ids || v_claim.run_id;
            v_finish := v_finish || (v_t + v_hold);
        END LOOP;
    END LOOP;

    RETURN QUERY
    SELECT
        k.name,
        k.priority,
        count(r.id)::integer,
        greatest(
            max(r.claimed_at - r.due_at),
            -- A kind still waiting at the end waited at least this long.
            CASE WHEN k.run_id IS NULL AND k.due_at <= v_end THEN v_end - k.due_at END,
            '0'::interval),
        greatest(
            max(r.claimed_at - r.due_at),
            CASE WHEN k.run_id IS NULL AND k.due_at <= v_end THEN v_end - k.due_at END
        ) > v_settings.stale_after
    FROM tickq.job_kind AS k
    LEFT JOIN tickq.job_run AS r ON r.kind = k.name AND r.dispatcher = 'simulator' AND r.claimed_at >= p_now
    WHERE k.enabled
    GROUP BY k.name, k.priority, k.run_id, k.due_at
    ORDER BY k.priority, k.name;
END
$$;
COMMENT ON FUNCTION tickq.simulate(numeric, jsonb, timestamptz) IS
'Runs the queue for p_hours from p_now with a moved clock through the real claim_jobs and '
'report_run: a claim at every tick and whenever a run finishes (unarmed irreversible kinds are '
'armed first by a manual run, keeping their due time); each run holds its slot for '
'p_durations->kind seconds, else its timeout. Per kind: runs, longest wait from due to claim, and '
'starved (waited longer than stale_after). Use it in a scratch database, in a transaction that '
'is rolled back.';
