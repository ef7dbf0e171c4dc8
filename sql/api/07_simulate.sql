-- The schedule simulator: the real claim_jobs and report_run with a moved clock.

CREATE OR REPLACE FUNCTION tickq.simulated_hold(
    p_kind tickq.job_kind,
    p_durations jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS interval
LANGUAGE sql IMMUTABLE
AS $$
    -- Each run holds its slot for its given duration, else its timeout (the worst case).
    SELECT coalesce(make_interval(secs => (p_durations ->> p_kind.name)::double precision), p_kind.timeout)
$$;
COMMENT ON FUNCTION tickq.simulated_hold(tickq.job_kind, jsonb, timestamptz) IS
'How long a simulated run of the kind holds its slot: p_durations->kind seconds, else its timeout. '
'p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.simulate_events(
    p_until timestamptz,
    p_durations jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_next_tick timestamptz := p_now;
    v_t timestamptz;
    v_run_ids bigint[];
    v_finish timestamptz[];
    v_keep_ids bigint[];
    v_keep_finish timestamptz[];
    v_claim record;
    v_events integer := 0;
    v_due timestamptz;
    v_holds jsonb;
BEGIN
    -- Meant for a scratch database: it claims and reports as dispatcher 'simulator' on whatever
    -- queue it is given. It goes on where an earlier call stopped (the simulator's runs still
    -- running are picked up), so a caller may commit between parts of a long window: inside one
    -- transaction every claim and report adds a version of the same few kind and slot rows that
    -- nothing can prune, and each step gets slower than the last.
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    -- How long each kind's runs hold their slot, read once rather than joined to every claim.
    SELECT jsonb_object_agg(k.name, tickq.simulated_hold(k, p_durations))
    INTO v_holds FROM tickq.job_kind AS k;
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
    -- The simulator's runs still running, found by the slot rows they hold (every run a claim
    -- opens holds one until it ends; a heavy run several, and is found by its first, r.slot),
    -- each by its primary key: not by a scan of the whole
    -- history, which grows with every run of the window and is read again at every part (the
    -- plan is made once, in the first part, when the history is empty; OFFSET 0 keeps the
    -- lookup by key whatever the planner thinks of the table's size).
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}'), coalesce(array_agg(r.finish ORDER BY r.id), '{}')
    INTO v_run_ids, v_finish
    FROM tickq.slot AS sl
    CROSS JOIN LATERAL (
        SELECT r.id, r.claimed_at + tickq.simulated_hold(k, p_durations) AS finish
        FROM tickq.job_run AS r
        INNER JOIN tickq.job_kind AS k ON r.kind = k.name
        WHERE r.id = sl.run_id AND r.slot = sl.n AND r.outcome = 'running' AND r.dispatcher = 'simulator'
        OFFSET 0
    ) AS r;
    -- Events in time order: every tick the OS timer wakes a dispatcher that claims the free
    -- slots; every finished run is reported and its slot claimed again at once.
    LOOP
        v_t := v_next_tick;
        FOR i IN 1..coalesce(cardinality(v_finish), 0) LOOP
            v_t := least(v_t, v_finish[i]);
        END LOOP;
        -- Runs an earlier call left that finished before p_now are reported at their own time,
        -- and the clock never claims before p_now.
        v_t := greatest(v_t, p_now);
        EXIT WHEN v_t > p_until;
        v_events := v_events + 1;

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

        -- The dispatcher would claim here; when every slot is held or nothing is due its claim
        -- finds nothing, so the simulator skips it (the outcome is the same, and cheaper).
        CONTINUE WHEN cardinality(v_run_ids) >= v_settings.slots OR NOT EXISTS (
            SELECT FROM tickq.job_kind AS k WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= v_t);
        FOR v_claim IN
            SELECT c.run_id, (v_holds ->> c.kind)::interval AS hold
            -- As a dispatcher does: claim no more than the slots its runs leave free.
            FROM tickq.claim_jobs(v_settings.slots - cardinality(v_run_ids), 'simulator', v_t) AS c
        LOOP
            v_run_ids := v_run_ids || v_claim.run_id;
            v_finish := v_finish || (v_t + v_claim.hold);
        END LOOP;
    END LOOP;
    RETURN v_events;
END
$$;
COMMENT ON FUNCTION tickq.simulate_events(timestamptz, jsonb, timestamptz) IS
'The simulator''s clock: from p_now through p_until, a claim at every tick (p_now, p_now + tick, '
'...) and whenever a run finishes, through the real claim_jobs and report_run as dispatcher '
'"simulator"; each run holds its slot for p_durations->kind seconds, else its timeout. Goes on '
'from the simulator''s runs still running. Returns the events it handled. Scratch databases only.';

CREATE OR REPLACE FUNCTION tickq.simulation_report(
    p_until timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    runs integer,
    longest_wait interval,
    starved boolean,
    worst_due_at timestamptz,
    behind text[]
)
LANGUAGE sql STABLE
AS $$
    WITH settings AS (SELECT s.stale_after FROM tickq.settings AS s),
    sim_runs AS (
        SELECT r.kind, r.due_at, r.claimed_at, coalesce(r.finished_at, p_until) AS ended_at,
            r.outcome = 'skipped' AS skipped
        FROM tickq.job_run AS r
        WHERE r.dispatcher = 'simulator' AND r.claimed_at >= p_now AND r.claimed_at <= p_until
    ),
    waits AS (
        -- Every wait from due to claim, and the waits of kinds still unclaimed at the end.
        SELECT r.kind, r.due_at, r.claimed_at AS until FROM sim_runs AS r
        UNION ALL
        SELECT k.name, k.due_at, p_until FROM tickq.job_kind AS k
        WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= p_until
    ),
    worst AS (
        SELECT DISTINCT ON (w.kind) w.kind, w.due_at, w.until, w.until - w.due_at AS wait
        FROM waits AS w
        ORDER BY w.kind, w.until - w.due_at DESC, w.due_at
    ),
    -- A skipped slot (catch_up) held no slot: no run, and the simulated queue dropped it, which
    -- starves the kind whatever its wait (in the simulator nothing sleeps: only a full queue
    -- makes a slot that late).
    run_counts AS (
        SELECT r.kind, (count(*) FILTER (WHERE NOT r.skipped))::integer AS runs, bool_or(r.skipped) AS skipped
        FROM sim_runs AS r GROUP BY r.kind
    ),
    holders AS (SELECT r.* FROM sim_runs AS r WHERE NOT r.skipped)
    SELECT
        k.name,
        k.priority,
        coalesce(c.runs, 0),
        CASE WHEN w.kind IS NOT NULL THEN greatest(w.wait, '0'::interval) END,
        coalesce(w.wait > s.stale_after, false) OR coalesce(c.skipped, false),
        CASE WHEN w.wait > '0'::interval THEN w.due_at END,
        -- What a starved kind waited behind: the kinds whose runs held slots during its worst
        -- wait, longest holders first.
        CASE WHEN w.wait > s.stale_after OR c.skipped THEN ARRAY(
            SELECT r.kind FROM holders AS r
            WHERE r.kind <> k.name AND r.claimed_at < w.until AND r.ended_at > w.due_at
            GROUP BY r.kind
            ORDER BY sum(least(r.ended_at, w.until) - greatest(r.claimed_at, w.due_at)) DESC, r.kind
        ) END
    FROM tickq.job_kind AS k
    CROSS JOIN settings AS s
    LEFT JOIN worst AS w ON w.kind = k.name
    LEFT JOIN run_counts AS c ON c.kind = k.name
    WHERE k.enabled
    ORDER BY k.priority, k.name
$$;
COMMENT ON FUNCTION tickq.simulation_report(timestamptz, timestamptz) IS
'What the simulator saw from p_now through p_until, per enabled kind: runs, longest wait from due '
'to claim (NULL when it was never due), starved (waited longer than stale_after, or a slot skipped '
'for its catch_up), when that wait '
'began, and for a starved kind the kinds whose runs held slots meanwhile, longest first.';

CREATE OR REPLACE FUNCTION tickq.simulate(
    p_hours numeric,
    p_durations jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    runs integer,
    longest_wait interval,
    starved boolean,
    worst_due_at timestamptz,
    behind text[]
)
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_hours IS NULL OR p_hours <= 0 THEN
        RAISE EXCEPTION 'simulate: the window must be a positive number of hours, got %',
            coalesce(p_hours::text, 'nothing')
            USING ERRCODE = 'TQ080', DETAIL = 'p_hours is the length of the simulated window.',
            HINT = 'Give a positive number of hours, or leave it out for a window that covers every '
                'schedule (tickq.simulation_windows).';
    END IF;
    PERFORM tickq.simulate_events(p_now + p_hours * interval '1 hour', p_durations, p_now);
    RETURN QUERY SELECT * FROM tickq.simulation_report(p_now + p_hours * interval '1 hour', p_now);
END
$$;
COMMENT ON FUNCTION tickq.simulate(numeric, jsonb, timestamptz) IS
'Runs the queue for p_hours from p_now with a moved clock (tickq.simulate_events) in one '
'transaction and reports per kind (tickq.simulation_report): runs, longest wait, starved, when '
'the worst wait began and what a starved kind waited behind. TQ080 for a window that is not '
'positive. Unarmed irreversible kinds are armed first by a manual run, keeping their due time. '
'Use it in a scratch database, in a transaction that is rolled back; for windows of '
'days, call simulate_events part by part with commits between.';

CREATE OR REPLACE FUNCTION tickq.simulation_start(
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- A queue that has run for a while: each kind waits for its own next slot, none is due at
    -- once because it was just synced, and nothing is running.
    UPDATE tickq.job_run AS r SET outcome = 'lost', finished_at = p_now WHERE r.outcome = 'running';
    UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id IS NOT NULL;
    UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL WHERE ps.run_id IS NOT NULL;
    UPDATE tickq.job_kind AS k SET
        run_id = NULL, leased_by = NULL, leased_until = NULL, attempts = 0, next_trigger = 'schedule',
        last_run_id = NULL,
        due_at = tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
            p_now - interval '1 microsecond')
    WHERE k.enabled;
    -- An earlier window's runs would count in this one's report.
    DELETE FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
END
$$;
COMMENT ON FUNCTION tickq.simulation_start(timestamptz) IS
'For the simulator, in a scratch database: puts every enabled kind at its first slot at or after '
'p_now with nothing running and no simulated run left, as in a queue that has been running for a '
'while (a kind new to a '
'queue is due at once; that one-off burst is not the steady state tickq check judges).';

CREATE OR REPLACE FUNCTION tickq.simulation_at_rest(
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- tickq.simulation_start(p_now) would change nothing here that a claim or a report reads:
    -- no run running, every slot and pool slot free, every enabled kind unleased and at the first
    -- try of its first slot at or after p_now. What it would still write is read by neither
    -- (last_run_id; the history, which only the report of a stretch reads, by claim time), so
    -- the clock moved on from here and the clock moved from simulation_start(p_now) elsewhere
    -- make the same runs.
    -- The cheap tests first (CASE keeps the order): the slot rows, then each kind's columns, and
    -- only then its next slot and the history.
    SELECT CASE WHEN EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL OR sl.leased_until IS NOT NULL)
            OR EXISTS (SELECT FROM tickq.job_kind AS k
                WHERE k.enabled AND (k.run_id IS NOT NULL OR k.leased_by IS NOT NULL OR k.leased_until IS NOT NULL
                    OR k.attempts <> 0 OR k.next_trigger <> 'schedule' OR k.due_at < p_now))
            THEN false
        ELSE NOT EXISTS (
            SELECT FROM tickq.pool_slot AS ps WHERE ps.run_id IS NOT NULL OR ps.leased_until IS NOT NULL)
            AND NOT EXISTS (
                SELECT FROM tickq.job_kind AS k
                WHERE k.enabled AND k.due_at IS DISTINCT FROM tickq.next_slot(k.every, k.every_offset, k.at_times,
                    k.on_days, k.days, k.months, k.cron, k.timezone, p_now - interval '1 microsecond'))
            AND NOT EXISTS (SELECT FROM tickq.job_run AS r WHERE r.outcome = 'running')
    END
$$;
COMMENT ON FUNCTION tickq.simulation_at_rest(timestamptz) IS
'For the simulator, in a scratch database: true when tickq.simulation_start(p_now) would change '
'nothing a claim or a report reads (no run running, every slot free, every enabled kind unleased '
'at its first slot at or after p_now), so a stretch simulated from simulation_start(p_now) in '
'another scratch database goes on exactly where this one stands.';

CREATE OR REPLACE FUNCTION tickq.simulation_parts(
    p_until timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (part_from timestamptz, part_until timestamptz)
LANGUAGE sql STABLE
AS $$
    -- A caller runs simulate_events part by part, committing after each: in one transaction
    -- every claim and report adds a version of the same few kind and slot rows that nothing can
    -- prune, and a week would take minutes instead of seconds. Parts of 15 minutes, rounded
    -- down to whole ticks (at least one), so every part starts on a tick; each ends just before
    -- the next part's first tick, which that part handles. 15 minutes, not 3 hours: the backend's
    -- CPU time of a real_fix week fell by about a fifth and of a day of 1,000 kinds by a quarter
    -- (bench/README.md); 10 minutes gained nothing more.
    -- After a first shorter part the parts begin on whole parts of the clock since 2000-01-01
    -- UTC (for 15 minutes the quarter hours, in every zone) when a tick falls there: slots are
    -- written on round times, so runs begin there and seldom run across one, and
    -- simulate_window finds the clock at rest at a part's start (where it may copy a day that
    -- repeats) more often. real_fix's week: 148 parts simulated, not 205 on :05, :20, :35 and
    -- :50 (its window starts at 23:35), with the same runs (bench/README.md).
    WITH p AS (
        SELECT s.tick, greatest(s.tick, s.tick * floor(extract(EPOCH FROM interval '15 minutes')
            / extract(EPOCH FROM s.tick))) AS part
        FROM tickq.settings AS s
    ),
    first AS (
        -- The first tick after p_now on a whole part of the clock; none: a part after p_now.
        SELECT p.part, coalesce((
            SELECT p_now + g.k * p.tick
            FROM generate_series(1, (extract(EPOCH FROM p.part) / extract(EPOCH FROM p.tick))::integer) AS g (k)
            WHERE date_bin(p.part, p_now + g.k * p.tick, timestamptz '2000-01-01 00:00:00+00') = p_now + g.k * p.tick
            ORDER BY g.k
            LIMIT 1
        ), p_now + p.part) AS at
        FROM p
    ),
    starts AS (
        SELECT p_now AS at WHERE p_now <= p_until
        UNION ALL
        SELECT g.at FROM first AS f CROSS JOIN LATERAL generate_series(f.at, p_until, f.part) AS g (at)
    )
    SELECT s.at, least(coalesce(lead(s.at) OVER (ORDER BY s.at) - interval '1 microsecond', p_until), p_until)
    FROM starts AS s
    ORDER BY s.at
$$;
COMMENT ON FUNCTION tickq.simulation_parts(timestamptz, timestamptz) IS
'The simulator''s clock, in parts: from p_now through p_until, parts of 15 minutes in whole ticks '
'(at least one), after a first shorter one on the clock''s quarter hours where a tick falls '
'there, each for one call of tickq.simulate_events with a commit after it.';

CREATE OR REPLACE PROCEDURE tickq.simulate_window(
    p_until timestamptz,
    p_durations jsonb DEFAULT NULL,
    p_steady boolean DEFAULT true,
    p_now timestamptz DEFAULT now()
)
LANGUAGE plpgsql
AS $$
DECLARE
    v_part record;
    v_rests timestamptz[] := '{}'::timestamptz[];
    v_copied timestamptz[];
    v_last timestamptz;
    v_at timestamptz;
BEGIN
    -- One CALL for a whole window: the parts of tickq.simulation_parts, each committed before
    -- the next starts (so the versions of the kind and slot rows it left can be pruned), with
    -- no round trip to the caller between them. Where the clock stands at rest, a stretch that
    -- repeats the stretch of an earlier day already simulated is not simulated again
    -- (tickq.simulation_repeat: its runs are copied); never the first instant (where
    -- irreversible kinds are armed), nor into the last part.
    IF p_steady THEN
        PERFORM tickq.simulation_start(p_now);
    END IF;
    SELECT max(p.part_from) INTO v_last FROM tickq.simulation_parts(p_until, p_now) AS p;
    FOR v_part IN SELECT p.part_from, p.part_until FROM tickq.simulation_parts(p_until, p_now) AS p LOOP
        CONTINUE WHEN v_part.part_from < v_at;
        IF v_part.part_from > p_now AND tickq.simulation_at_rest(v_part.part_from) THEN
            v_rests := v_rests || v_part.part_from;
            v_copied := tickq.simulation_repeat(v_rests, v_last, v_part.part_from);
            IF v_copied IS NOT NULL THEN
                -- The copy stands at rest where the day it copies did: a day after it can be
                -- copied in turn (else it had no rest point a day before to start from).
                v_rests := v_rests || v_copied;
                v_at := v_copied[cardinality(v_copied)];
                COMMIT;
                CONTINUE;
            END IF;
        END IF;
        PERFORM tickq.simulate_events(v_part.part_until, p_durations, v_part.part_from);
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE tickq.simulate_window(timestamptz, jsonb, boolean, timestamptz) IS  -- noqa: LT01
'The simulator''s clock through a whole window in one CALL: with p_steady, tickq.simulation_start '
'at p_now first; then tickq.simulate_events for each part of tickq.simulation_parts(p_until, '
'p_now), committing after each. Must be called outside a transaction block (it commits). '
'Scratch databases only.';
REVOKE ALL ON PROCEDURE tickq.simulate_window(timestamptz, jsonb, boolean, timestamptz) FROM public;
