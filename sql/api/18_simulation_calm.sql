-- Calm stretches of the simulator's clock, written without the claim and report loop
-- (tickq.simulation_clock, called by tickq.simulate_window for each part: 19_simulate_window.sql).
--
-- While the slots never run short no kind waits for another: every kind is claimed at the first
-- tick at or after its due time (the clock goes there, and every claim takes everything due),
-- its run holds its slot for its hold, and the report sets its next due time to its next slot
-- after the run ends (tickq.finish_run). So each kind's runs follow from its own schedule
-- (tickq.simulation_calm_runs). Where they would need more slot rows than are free, some wait
-- (tickq.simulation_calm_walk, 18_simulation_calm_walk.sql); the first claim instant at which a
-- kind would skip slots for its catch_up, or a part that starts with the slots short, is where
-- the real loop must take over (tickq.simulation_events from that tick on). Up to there the
-- runs, the kinds, the slot rows are written as the claims and reports would write them
-- (tickq.simulation_calm_write):
-- the same rows, slot rows picked as tickq.claim_plain picks them (the lowest free, in claim order),
-- ids in claim order. Every event falls on a tick when every hold is a whole number of ticks;
-- where anything else could be in play (weights, pools, agent kinds, pauses, retries, a run the
-- simulator did not open, a hold longer than the lease or not whole ticks) the part goes through
-- the real loop whole. Setting tickq.simulator_calm to off forces the real loop everywhere.

CREATE OR REPLACE FUNCTION tickq.simulation_calm_allowed(
    p_holds jsonb
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- Read once per window: what the calm stretches assume of the registry.
    SELECT coalesce(current_setting('tickq.simulator_calm', true), 'on') <> 'off'
        AND NOT EXISTS (
            SELECT FROM tickq.job_kind AS k CROSS JOIN tickq.settings AS s
            WHERE k.enabled AND (k.weight <> 1 OR k.pools <> '{}' OR k.name LIKE 'agent.%'
                OR (p_holds ->> k.name) IS NULL
                OR (p_holds ->> k.name)::interval <= '0'::interval
                OR (p_holds ->> k.name)::interval > s.lease
                OR extract(EPOCH FROM (p_holds ->> k.name)::interval) % extract(EPOCH FROM s.tick) <> 0))
$$;
COMMENT ON FUNCTION tickq.simulation_calm_allowed(jsonb) IS
'For the simulator: true when its parts may be written without the claim and report loop where '
'the slots never run short (tickq.simulation_calm): no enabled kind has a weight, pools or an agent '
'name, and every hold (p_holds, tickq.simulation_holds) is a positive whole number of ticks within '
'the lease; false when the setting tickq.simulator_calm is off.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm_state(
    p_from timestamptz,
    p_holds jsonb
) RETURNS TABLE (calm boolean, short boolean, slot_rows integer[], busy timestamptz[])
LANGUAGE sql STABLE
AS $$
    -- One pass over the kinds and one over the slot rows. calm: no kind paused, between tries or
    -- leased without a run; every run going on is the simulator's, scheduled, started by no person,
    -- holds its one slot row (within the limit) and ends on a tick of p_from's grid within its
    -- lease; every kind leased has its run in a slot row (the slot rows' runs are distinct kinds'
    -- runs, so as many kinds leased as runs held). short: the runs going on past p_from and the
    -- kinds due by then want more slot rows than there are (a run ending at p_from is reported
    -- before the claim there). slot_rows, busy: the slot rows within the limit in order, each with
    -- the end of the run holding it (NULL: free).
    WITH kinds AS (
        SELECT coalesce(bool_or(k.enabled AND (k.paused_until > p_from OR (k.run_id IS NULL
                AND (k.attempts <> 0 OR k.next_trigger <> 'schedule' OR k.leased_by IS NOT NULL)))), false) AS odd,
            count(k.run_id) AS leased,
            count(*) FILTER (WHERE tickq.kind_claimable(k) AND k.run_id IS NULL AND k.due_at <= p_from) AS due
        FROM tickq.job_kind AS k
    ),
    rows AS (
        SELECT coalesce(bool_or(sl.run_id IS NOT NULL AND (sl.n > s.slots OR r.id IS NULL OR r.slot_row <> sl.n
                OR r.outcome <> 'running' OR r.dispatcher <> 'simulator' OR r.run_trigger <> 'schedule'
                OR r.run_by IS NOT NULL OR r.weight <> 1 OR k.run_id IS DISTINCT FROM r.id OR NOT k.enabled
                OR sl.leased_until < r.ends
                OR extract(EPOCH FROM r.ends - p_from) % extract(EPOCH FROM s.tick) <> 0)), false) AS odd,
            count(sl.run_id) AS held,
            count(*) FILTER (WHERE r.ends > p_from) AS going,
            count(*) FILTER (WHERE sl.n <= s.slots) AS n,
            array_agg(sl.n::integer ORDER BY sl.n) FILTER (WHERE sl.n <= s.slots) AS slot_rows,
            array_agg(r.ends ORDER BY sl.n) FILTER (WHERE sl.n <= s.slots) AS busy
        FROM tickq.slot AS sl
        CROSS JOIN tickq.settings AS s
        LEFT JOIN LATERAL (  -- the columns read only: a run's row is wide
            SELECT r.id, r.kind, r.slot_row, r.outcome, r.dispatcher, r.run_trigger, r.run_by, r.weight,
                r.claimed_at + (p_holds ->> r.kind)::interval AS ends
            FROM tickq.job_run AS r
            WHERE r.id = sl.run_id OFFSET 0
        ) AS r ON true
        LEFT JOIN tickq.job_kind AS k ON k.name = r.kind
    )
    SELECT NOT k.odd AND NOT sl.odd AND k.leased = sl.held, sl.going + k.due > sl.n, sl.slot_rows, sl.busy
    FROM kinds AS k CROSS JOIN rows AS sl
$$;
COMMENT ON FUNCTION tickq.simulation_calm_state(timestamptz, jsonb) IS
'For tickq.simulation_calm, the queue at p_from: calm when a calm stretch can go on from it (no kind '
'paused, between tries or leased without a run, every run going on the simulator''s scheduled run '
'in one slot row, ending (p_holds) on a tick within its lease); short when the runs going on and the '
'kinds due want more slot rows than there are; the slot rows in order with the ends of their runs.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm_runs(
    p_from timestamptz,
    p_until timestamptz,
    p_holds jsonb
) RETURNS TABLE (
    kind text, priority tickq.priority, due_at timestamptz, claimed_at timestamptz, ends_at timestamptz,
    catch_up interval
)
LANGUAGE sql STABLE
AS $$
    -- Each claimable kind's runs claimed from p_from through p_until if no kind waited for a slot:
    -- claimed at the first tick (of p_from's grid) at or after its due time, as the clock's wake
    -- has it, holding its slot for its hold; the next due time the next slot after the run ends
    -- (or a day later when there is none), as tickq.finish_run sets it. A kind running at p_from
    -- starts from the end of its run. Each kind's first run claimed after p_until is returned
    -- too when it is known (its due time is the kind's after the part).
    WITH RECURSIVE s AS (
        SELECT st.tick, extract(EPOCH FROM st.tick) AS secs FROM tickq.settings AS st
    ),
    k AS MATERIALIZED (  -- each kind's due time computed once (the runs' first claim reads it thrice)
        SELECT k.name, k.priority, k.catch_up, k.sched, k.hold, k.calendar, k.cal,
            CASE WHEN k.ends IS NULL THEN k.due_at
                ELSE coalesce(CASE WHEN k.cal IS NULL THEN tickq.next_slot(k.sched, k.ends)
                    ELSE tickq.calendar_next(k.cal, k.ends) END, k.ends + interval '1 day') END AS due
        FROM (
            -- A running kind is due at its next slot after its run ends (next_slot: for a calendar,
            -- calendar_next of its calendar, read here once; its runs read it again).
            SELECT k.name, k.priority, k.catch_up, k.due_at, tickq.schedule_of(k) AS sched,
                (p_holds ->> k.name)::interval AS hold, k.every IS NULL AS calendar, r.ends_at AS ends,
                CASE WHEN k.every IS NULL AND r.ends_at IS NOT NULL THEN tickq.calendar_of(tickq.schedule_of(k)) END AS cal
            FROM tickq.job_kind AS k
            LEFT JOIN LATERAL (
                SELECT r.claimed_at + (p_holds ->> k.name)::interval AS ends_at FROM tickq.job_run AS r
                WHERE r.id = k.run_id OFFSET 0
            ) AS r ON true
            WHERE tickq.kind_claimable(k)
                AND ((k.run_id IS NULL AND k.due_at <= p_until) OR (k.run_id IS NOT NULL AND r.ends_at <= p_until))
            OFFSET 0
        ) AS k
    ),
    runs (kind, priority, catch_up, sched, cal, hold, due, claimed) AS (
        SELECT k.name, k.priority, k.catch_up, k.sched,
            -- the calendar read only for a kind whose next due time is looked for in the part
            CASE WHEN k.calendar AND c.claimed <= p_until AND c.claimed + k.hold <= p_until
                THEN coalesce(k.cal, tickq.calendar_of(k.sched)) END,
            k.hold, k.due, c.claimed
        FROM k
        CROSS JOIN s
        CROSS JOIN LATERAL (
            SELECT greatest(p_from, p_from + s.tick * ceil(extract(EPOCH FROM k.due - p_from) / s.secs)) AS claimed
            OFFSET 0  -- computed once, not at each of its three uses
        ) AS c
        UNION ALL
        SELECT r.kind, r.priority, r.catch_up, r.sched, r.cal, r.hold, n.due,
            greatest(p_from, p_from + s.tick * ceil(extract(EPOCH FROM n.due - p_from) / s.secs))
        FROM runs AS r
        CROSS JOIN s
        CROSS JOIN LATERAL (
            -- next_slot, with a calendar's calendar read once per kind
            SELECT coalesce(CASE WHEN r.cal IS NULL THEN tickq.next_slot(r.sched, r.claimed + r.hold)
                ELSE tickq.calendar_next(r.cal, r.claimed + r.hold) END, r.claimed + r.hold + interval '1 day') AS due
            OFFSET 0  -- computed once, not at each of its two uses
        ) AS n
        WHERE r.claimed <= p_until AND r.claimed + r.hold <= p_until
    )
    SELECT r.kind, r.priority, r.due, r.claimed, r.claimed + r.hold, r.catch_up
    FROM runs AS r
$$;
COMMENT ON FUNCTION tickq.simulation_calm_runs(timestamptz, timestamptz, jsonb) IS
'For tickq.simulation_calm: the runs each claimable kind would have claimed from p_from through '
'p_until were no kind ever kept waiting: its due time, claimed at the first tick at or after it, '
'ending its hold (p_holds) later, the next due time its next slot after that end '
'(tickq.finish_run''s rule). A kind running at p_from starts from its run''s end. Each kind''s first '
'run claimed after p_until is returned too where its last run ends by then.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm(
    p_from timestamptz,
    p_until timestamptz,
    p_holds jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql
AS $$
DECLARE
    v_state record;
    v_kinds text[];
    v_dues timestamptz[];
    v_claimed timestamptz[];
    v_ends timestamptz[];
    v_priorities tickq.priority[];
    v_catch_ups interval[];
    v_walk record;
    v_count integer;
    v_next_kinds text[];
    v_next_dues timestamptz[];
BEGIN
    -- The part from p_from through p_until as far as it is calm: returns the instant from which
    -- the real loop must go on (NULL: the whole part was written; p_from: nothing was).
    SELECT * INTO STRICT v_state FROM tickq.simulation_calm_state(p_from, p_holds);
    IF NOT v_state.calm OR v_state.short THEN
        RETURN p_from;
    END IF;
    -- The runs in time order and, at one instant, in claim order (tickq.simulation_calm_order).
    SELECT o.* INTO STRICT v_kinds, v_dues, v_claimed, v_ends, v_priorities, v_catch_ups
    FROM (
        SELECT array_agg(c.kind) AS kinds, array_agg(c.due_at) AS dues, array_agg(c.claimed_at) AS claimed,
            array_agg(c.ends_at) AS ends, array_agg(c.priority) AS priorities, array_agg(c.catch_up) AS catch_ups
        FROM tickq.simulation_calm_runs(p_from, p_until, p_holds) AS c
    ) AS c
    CROSS JOIN LATERAL tickq.simulation_calm_order(c.kinds, c.dues, c.claimed, c.ends, c.priorities, c.catch_ups) AS o;
    -- The slot rows they take, instant by instant, and the runs that wait where the slots run short,
    -- up to the first instant where a kind would skip slots for its catch_up.
    SELECT * INTO STRICT v_walk FROM tickq.simulation_calm_walk(v_kinds, v_dues, v_claimed, v_ends, v_priorities,
        v_catch_ups, v_state.slot_rows, v_state.busy, p_from, p_until);
    IF v_walk.short = p_from THEN
        RETURN p_from;
    END IF;
    v_count := v_walk.written;
    -- Each kind's due time after its last run written: that of its first run not written. With
    -- the whole part written, those are the runs after it, one a kind (tickq.simulation_calm_runs
    -- goes on no further, nor tickq.simulation_calm_wait).
    IF v_walk.short IS NULL THEN
        v_next_kinds := v_walk.kinds[v_count + 1:];
        v_next_dues := v_walk.dues[v_count + 1:];
    ELSE
        SELECT coalesce(array_agg(n.kind), '{}'), coalesce(array_agg(n.due), '{}') INTO v_next_kinds, v_next_dues
        FROM (SELECT DISTINCT ON (u.kind) u.kind, u.due
            FROM unnest(v_walk.kinds[v_count + 1:], v_walk.dues[v_count + 1:]) WITH ORDINALITY AS u (kind, due, i)
            ORDER BY u.kind, u.i) AS n;
    END IF;
    PERFORM tickq.simulation_calm_write(v_walk.kinds[1:v_count], v_walk.dues[1:v_count], v_walk.claimed[1:v_count],
        v_walk.ends[1:v_count], v_walk.slot_rows[1:v_count], coalesce(v_walk.short, p_until + interval '1 microsecond'),
        p_holds, v_next_kinds, v_next_dues);
    RETURN v_walk.short;
END
$$;
COMMENT ON FUNCTION tickq.simulation_calm(timestamptz, timestamptz, jsonb, timestamptz) IS
'For the simulator: the part from p_from through p_until written without the claim and report loop '
'(tickq.simulation_calm_runs, then instant by instant the slot rows as the claims take them, runs '
'that find none free waiting for the first to come free, up to the first instant where a kind would '
'skip slots for its catch_up: tickq.simulation_calm_walk; tickq.simulation_calm_write); returns the instant from '
'which tickq.simulation_events must go on: NULL when the whole part was written, p_from when '
'nothing was (tickq.simulation_calm_state: the queue at p_from is not one a calm stretch can go on '
'from, or is short already). p_holds: tickq.simulation_holds.';

CREATE OR REPLACE FUNCTION tickq.simulation_clock(
    p_from timestamptz,
    p_until timestamptz,
    p_holds jsonb,
    p_calm boolean,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_from timestamptz := p_from;
    v_short timestamptz;
    v_back timestamptz;
    v_tick interval;
    v_ticks integer := 1;
    v_handed timestamptz[] := '{}'::timestamptz[];
BEGIN
    -- Calm stretches written (tickq.simulation_calm); from the first instant they cannot go on
    -- from (a part short at its start, a kind later than its catch_up) the real loop for one
    -- tick, then calm again. A hand-back that finds the slots still short
    -- at once doubles the real loop's next turn (up to 32 ticks): a queue that stays short, tick
    -- after tick, asks the calm stretch a few times, not at every tick. The real loop may stop
    -- and go on at any tick: a call begins with a claim at its start, which claims what a claim
    -- there would have. (Five ticks every time: the month of 1,000 cron kinds ran 14,623 runs
    -- through the real loop; one tick first: 1,643, the same runs, bench/README.md.)
    IF NOT p_calm THEN
        PERFORM tickq.simulation_events(p_until, p_holds, p_from);
        RETURN ARRAY[p_from];
    END IF;
    SELECT s.tick INTO STRICT v_tick FROM tickq.settings AS s;
    LOOP
        v_short := tickq.simulation_calm(v_from, p_until, p_holds);
        EXIT WHEN v_short IS NULL;
        v_ticks := CASE WHEN v_short = v_from AND v_from > p_from THEN least(v_ticks * 2, 32) ELSE 1 END;
        v_handed := v_handed || v_short;
        v_back := v_short + v_tick * v_ticks;
        IF v_back > p_until THEN
            PERFORM tickq.simulation_events(p_until, p_holds, v_short);
            EXIT;
        END IF;
        PERFORM tickq.simulation_events(v_back - interval '1 microsecond', p_holds, v_short);
        v_from := v_back;
    END LOOP;
    RETURN v_handed;
END
$$;
COMMENT ON FUNCTION tickq.simulation_clock(timestamptz, timestamptz, jsonb, boolean, timestamptz) IS
'For tickq.simulate_window: the clock through one part, from p_from through p_until. With p_calm '
'(tickq.simulation_calm_allowed) its calm stretches are written without the claim and report loop '
'(tickq.simulation_calm) and the real loop (tickq.simulation_events) runs from each instant they '
'cannot go on from (the slots short at the part''s start, a kind later than its catch_up) for one '
'tick, twice as long each time the slots are still short when it hands back (at most 32 ticks); '
'without, the real loop runs the whole part. Returns the instants the real loop took over at. '
'Scratch databases only.';
