-- The schedule simulator: the real claim_jobs and report_run with a moved clock.

CREATE OR REPLACE FUNCTION tickq.simulated_hold(
    p_kind tickq.job_kind,
    p_durations jsonb
) RETURNS interval
LANGUAGE sql IMMUTABLE
AS $$
    -- Each run holds its slot for its given duration, else its timeout (the worst case).
    SELECT coalesce(make_interval(secs => (p_durations ->> p_kind.name)::double precision), p_kind.timeout)
$$;
COMMENT ON FUNCTION tickq.simulated_hold(tickq.job_kind, jsonb) IS
'How long a simulated run of the kind holds its slot: p_durations->kind seconds, else its timeout.';

CREATE OR REPLACE FUNCTION tickq.simulation_session() RETURNS void
LANGUAGE sql
AS $$
    -- What the simulator's functions may keep for the rest of the session: the calendars of
    -- its cron strings (tickq.cron_calendar).
    SELECT set_config('tickq.simulator', 'on', false)
$$;
COMMENT ON FUNCTION tickq.simulation_session() IS
'Marks the session as the simulator''s (setting tickq.simulator = on, for the session): '
'tickq.cron_calendar then keeps each cron string''s calendar for the session. Scratch databases '
'only.';

CREATE OR REPLACE FUNCTION tickq.simulation_arm(
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_claim record;
    v_armed integer := 0;
BEGIN
    -- The question is whether the schedule fits once everything runs: each unarmed irreversible
    -- kind is armed first by a manual run through the real path, keeping its due time. The run
    -- runs the kind's command as the sync wrote it (command_since: the sync's instant, later than
    -- a window that opens before it, which the arming would otherwise not count).
    FOR v_claim IN
        SELECT k.name AS kind, k.due_at FROM tickq.job_kind AS k
        WHERE k.irreversible AND k.armed_at IS NULL AND k.enabled AND k.run_id IS NULL
        ORDER BY k.name
    LOOP
        UPDATE tickq.job_kind AS k SET command_since = least(k.command_since, p_now) WHERE k.name = v_claim.kind;
        PERFORM tickq.report_run(c.run_id, 'simulator: first run', 'ok', 0, NULL, '0'::interval, p_now)
        FROM tickq.claim_manual(v_claim.kind, 'simulator: first run', 'simulator', p_now) AS c;
        UPDATE tickq.job_kind AS k SET due_at = v_claim.due_at WHERE k.name = v_claim.kind;
        v_armed := v_armed + 1;
    END LOOP;
    RETURN v_armed;
END
$$;
COMMENT ON FUNCTION tickq.simulation_arm(timestamptz) IS
'For the simulator, in a scratch database: arms each enabled unarmed irreversible kind by a manual '
'run at p_now through the real claim and report (as a person''s first run would), keeping its due '
'time. Returns how many it armed.';

CREATE OR REPLACE FUNCTION tickq.simulation_next_due() RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- The due time a claim could first find something at: the earliest of the enabled kinds no
    -- run holds. One pass over job_kind: no index holds every such kind (job_kind_claimable
    -- leaves unarmed kinds out), and the four ranges by lane it once read were four scans.
    SELECT min(k.due_at) FROM tickq.job_kind AS k WHERE k.enabled AND k.run_id IS NULL
$$;
COMMENT ON FUNCTION tickq.simulation_next_due() IS
'For the simulator: the earliest due time of an enabled kind no run holds (NULL: none), the first '
'instant a claim could find anything; paused and unarmed kinds count, as the claim the simulator '
'skips when nothing is due counts them.';

CREATE OR REPLACE FUNCTION tickq.simulation_holds(
    p_durations jsonb DEFAULT NULL
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(jsonb_object_agg(k.name, tickq.simulated_hold(k, p_durations)), '{}') FROM tickq.job_kind AS k
$$;
COMMENT ON FUNCTION tickq.simulation_holds(jsonb) IS
'For the simulator: how long each kind''s runs hold their slot (tickq.simulated_hold), by kind name, '
'read once rather than joined to every claim.';

CREATE OR REPLACE FUNCTION tickq.simulate_events(
    p_until timestamptz,
    p_durations jsonb DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
BEGIN
    -- Meant for a scratch database: it claims and reports as dispatcher 'simulator' on whatever
    -- queue it is given. It goes on where an earlier call stopped (the simulator's runs still
    -- running are picked up), so a caller may commit between parts of a long window: inside one
    -- transaction every claim and report adds a version of the same few kind and slot rows that
    -- nothing can prune, and each step gets slower than the last.
    PERFORM tickq.simulation_session();
    PERFORM tickq.simulation_arm(p_now);
    RETURN tickq.simulation_events(p_until, tickq.simulation_holds(p_durations), p_now);
END
$$;
COMMENT ON FUNCTION tickq.simulate_events(timestamptz, jsonb, timestamptz) IS
'The simulator''s clock: from p_now through p_until, a claim at every tick (p_now, p_now + tick, '
'...) and whenever a run finishes, through the real claim_jobs and report_run as dispatcher '
'"simulator"; each run holds its slot for p_durations->kind seconds, else its timeout. Unarmed '
'irreversible kinds are armed first (tickq.simulation_arm); ticks at which a claim could find '
'nothing cost nothing (tickq.simulation_events). Goes on from the simulator''s runs still running. '
'Returns the events it handled. Scratch databases only.';

CREATE OR REPLACE FUNCTION tickq.simulation_events(
    p_until timestamptz,
    p_holds jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings tickq.settings;
    v_tick numeric;
    v_wake timestamptz := p_now;
    v_t timestamptz;
    v_due timestamptz;
    v_run_ids bigint[];
    v_finish timestamptz[];
    v_keep_ids bigint[];
    v_keep_finish timestamptz[];
    v_claim record;
    v_events integer := 0;
BEGIN
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    v_tick := extract(EPOCH FROM v_settings.tick);
    -- The simulator's runs still running, found by the slot rows they hold (every run a claim
    -- opens holds one until it ends; a heavy run several, and is found by its first, r.slot_row),
    -- each by its primary key (OFFSET 0 keeps the lookup by key whatever the planner thinks of
    -- the history's size, read again at every part).
    SELECT coalesce(array_agg(r.id ORDER BY r.id), '{}'), coalesce(array_agg(r.finish ORDER BY r.id), '{}')
    INTO v_run_ids, v_finish
    FROM tickq.slot AS sl
    CROSS JOIN LATERAL (
        SELECT r.id, r.claimed_at + (p_holds ->> r.kind)::interval AS finish
        FROM tickq.job_run AS r
        WHERE r.id = sl.run_id AND r.slot_row = sl.n AND r.outcome = 'running' AND r.dispatcher = 'simulator'
        OFFSET 0
    ) AS r;
    -- Events in time order: at every tick (p_now, p_now + tick, ...) the OS timer wakes a
    -- dispatcher that claims the free slots; every finished run is reported and its slot
    -- claimed again at once. The clock goes straight to the next instant anything can happen:
    -- while every slot is held, the next finish; while nothing is due, the first tick at or
    -- after the earliest due time (tickq.simulation_next_due) or a finish before it. At every
    -- tick it passes over, a claim would have found nothing, and the simulator skips those
    -- claims anyway (the outcome is the same, and cheaper), so the same claims are made.
    LOOP
        v_t := v_wake;
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
        -- The next tick after this instant, unless nothing can be claimed before a later one.
        v_wake := p_now + v_settings.tick * (floor(extract(EPOCH FROM v_t - p_now) / v_tick) + 1);
        IF cardinality(v_run_ids) >= v_settings.slots THEN
            v_wake := 'infinity';
            CONTINUE;
        ELSIF NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= v_t) THEN
            -- nothing due: the clock goes to the tick where something is (asked only now, as a
            -- queue with something due at most ticks would pay for it at every one)
            v_due := tickq.simulation_next_due();
            v_wake := coalesce(p_now + v_settings.tick * ceil(extract(EPOCH FROM v_due - p_now) / v_tick), 'infinity');
            CONTINUE;
        END IF;
        FOR v_claim IN
            SELECT c.run_id, (p_holds ->> c.kind)::interval AS hold
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
COMMENT ON FUNCTION tickq.simulation_events(timestamptz, jsonb, timestamptz) IS
'The simulator''s clock from p_now through p_until (tickq.simulate_events without its set-up): each '
'run holds its slot for p_holds->kind (tickq.simulation_holds); ticks at which a claim could find '
'nothing (every slot held, nothing due) cost nothing. Returns the events it handled. Scratch '
'databases only.';

CREATE OR REPLACE FUNCTION tickq.simulation_report(
    p_until timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS SETOF tickq.simulated_kind
LANGUAGE sql STABLE
-- Every wait read once, hashed by kind: a month of 1,000 kinds is 734,292 waits. job_run has no
-- statistics in a scratch database (nothing analyzes it), so the planner takes a window's runs
-- for a handful and would sort them on disk to group them (0.7 s against 0.35 s:
-- bench/README.md). Only the order of the rows it returns needs a sort.
SET enable_sort = off
AS $$
    WITH settings AS (SELECT s.stale_after FROM tickq.settings AS s),
    sim_runs AS (
        SELECT r.kind, r.due_at, r.claimed_at, coalesce(r.finished_at, p_until) AS ended_at,
            r.outcome = 'skipped' AS skipped
        FROM tickq.job_run AS r
        WHERE r.dispatcher = 'simulator' AND r.claimed_at >= p_now AND r.claimed_at <= p_until
    ),
    waits AS (
        -- Every wait from due to claim, and the waits of kinds still unclaimed at the end (their
        -- skipped NULL: no run).
        SELECT r.kind, r.due_at, r.claimed_at AS until, r.outcome = 'skipped' AS skipped
        FROM tickq.job_run AS r
        WHERE r.dispatcher = 'simulator' AND r.claimed_at >= p_now AND r.claimed_at <= p_until
        UNION ALL
        SELECT k.name, k.due_at, p_until, NULL FROM tickq.job_kind AS k
        WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= p_until
    ),
    -- Per kind its runs, whether one skipped, its longest wait (unknown, NULL, when a wait has no
    -- due time, as a sort by wait puts it first), and the longest wait that began first, in the
    -- same pass: the greatest [wait, p_until - due, p_until - end] (the end follows the due time
    -- among waits as long), read back in UTC, where a day is always 24 hours.
    -- A skipped slot (catch_up) held no slot: no run, and the simulated queue dropped it, which
    -- starves the kind whatever its wait (in the simulator nothing sleeps: only a full queue
    -- makes a slot that late).
    run_counts AS (
        SELECT w.kind, (count(*) FILTER (WHERE NOT w.skipped))::integer AS runs, bool_or(w.skipped) AS skipped,
            CASE WHEN NOT bool_or(w.due_at IS NULL) THEN max(w.until - w.due_at) END AS wait,
            max(ARRAY[w.until - w.due_at, p_until - w.due_at, p_until - w.until]) AS longest
        FROM waits AS w GROUP BY w.kind
    ),
    worst AS (
        SELECT c.kind, c.wait, c.runs, c.skipped,
            ((p_until AT TIME ZONE 'UTC') - c.longest[2]) AT TIME ZONE 'UTC' AS due_at,
            CASE WHEN c.wait IS NOT NULL THEN ((p_until AT TIME ZONE 'UTC') - c.longest[3]) AT TIME ZONE 'UTC' END
                AS until
        FROM run_counts AS c
    ),
    holders AS (SELECT r.* FROM sim_runs AS r WHERE NOT r.skipped)
    SELECT
        k.name,
        k.priority,
        coalesce(w.runs, 0),
        CASE WHEN w.kind IS NOT NULL THEN greatest(w.wait, '0'::interval) END,
        coalesce(w.wait > s.stale_after, false) OR coalesce(w.skipped, false),
        CASE WHEN w.wait > '0'::interval THEN w.due_at END,
        -- What a starved kind waited behind: the kinds whose runs held slots during its worst
        -- wait, longest holders first.
        CASE WHEN w.wait > s.stale_after OR w.skipped THEN ARRAY(
            SELECT r.kind FROM holders AS r
            WHERE r.kind <> k.name AND r.claimed_at < w.until AND r.ended_at > w.due_at
            GROUP BY r.kind
            ORDER BY sum(least(r.ended_at, w.until) - greatest(r.claimed_at, w.due_at)) DESC, r.kind
        ) END
    FROM tickq.job_kind AS k
    CROSS JOIN settings AS s
    LEFT JOIN worst AS w ON w.kind = k.name
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
) RETURNS SETOF tickq.simulated_kind
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
    PERFORM tickq.simulation_session();
    -- A queue that has run for a while: each kind waits for its own next slot, none is due at
    -- once because it was just synced, and nothing is running.
    UPDATE tickq.job_run AS r SET outcome = 'lost', finished_at = p_now WHERE r.outcome = 'running';
    UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL WHERE sl.run_id IS NOT NULL;
    UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL WHERE ps.run_id IS NOT NULL;
    UPDATE tickq.job_kind AS k SET
        run_id = NULL, leased_by = NULL, leased_until = NULL, attempts = 0, next_trigger = 'schedule',
        last_run_id = NULL,
        due_at = tickq.next_slot(tickq.schedule_of(k), p_now - interval '1 microsecond')
    WHERE k.enabled;
    -- An earlier window's runs would count in this one's report. None is running now (above).
    -- Where they are all the runs there are and no foreign key names job_run (a scratch
    -- database: tickq.db.scratch drops those), TRUNCATE lets go of them without a row's work or
    -- a dead row left for the next window's scans (nothing vacuums a scratch database).
    IF NOT EXISTS (SELECT FROM tickq.job_run AS r WHERE r.dispatcher IS DISTINCT FROM 'simulator')
        AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint AS c
            WHERE c.confrelid = 'tickq.job_run'::regclass AND c.contype = 'f') THEN
        TRUNCATE tickq.job_run;
    ELSE
        DELETE FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.simulation_start(timestamptz) IS
'For the simulator, in a scratch database: puts every enabled kind at its first slot at or after '
'p_now with nothing running and no simulated run left, as in a queue that has been running for a '
'while (a kind new to a '
'queue is due at once; that one-off burst is not the steady state tickq check judges).';
