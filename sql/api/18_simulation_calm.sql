-- Calm stretches of the simulator's clock, written without the claim and report loop
-- (tickq.simulation_part, called by tickq.simulate_window for each part: 19_simulate_window.sql).
--
-- While the slots never run short no kind waits for another: every kind is claimed at the first
-- tick at or after its due time (the clock goes there, and every claim takes everything due),
-- its run holds its slot for its hold, and the report sets its next due time to its next slot
-- after the run ends (tickq.finish_run). So each kind's runs follow from its own schedule
-- (tickq.simulation_calm_runs), and the first claim instant at which they would need more slot
-- rows than there are (or a kind would skip slots for its catch_up) is where the real loop must
-- take over (tickq.simulation_events from that tick on). Up to there the runs, the kinds, the
-- slot rows are written as the claims and reports would write them (tickq.simulation_calm_write):
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
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- At p_from: no kind paused, between tries or leased without a run; every run going on is the
    -- simulator's, scheduled, started by no person, holds its one slot row (within the limit) and
    -- ends on a tick of p_from's grid within its lease.
    SELECT NOT EXISTS (
            SELECT FROM tickq.job_kind AS k
            WHERE k.enabled AND (k.paused_until > p_from
                OR (k.run_id IS NULL AND (k.attempts <> 0 OR k.next_trigger <> 'schedule' OR k.leased_by IS NOT NULL))))
        AND NOT EXISTS (
            SELECT FROM tickq.slot AS sl CROSS JOIN tickq.settings AS s
            LEFT JOIN LATERAL (SELECT r.* FROM tickq.job_run AS r WHERE r.id = sl.run_id OFFSET 0) AS r ON true
            LEFT JOIN tickq.job_kind AS k ON k.name = r.kind
            WHERE sl.run_id IS NOT NULL AND (sl.n > s.slots OR r.id IS NULL OR r.slot_row <> sl.n
                OR r.outcome <> 'running' OR r.dispatcher <> 'simulator' OR r.run_trigger <> 'schedule'
                OR r.run_by IS NOT NULL OR r.weight <> 1 OR k.run_id IS DISTINCT FROM r.id OR NOT k.enabled
                OR sl.leased_until < r.claimed_at + (p_holds ->> r.kind)::interval
                OR extract(EPOCH FROM r.claimed_at + (p_holds ->> r.kind)::interval - p_from)
                % extract(EPOCH FROM s.tick) <> 0))
        AND NOT EXISTS (
            SELECT FROM tickq.job_kind AS k
            WHERE k.run_id IS NOT NULL AND NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.run_id = k.run_id))
$$;
COMMENT ON FUNCTION tickq.simulation_calm_state(timestamptz, jsonb) IS
'For tickq.simulation_calm: true when the queue at p_from is one its calm stretch can go on from: '
'no kind paused, between tries or leased without a run, and every run going on the simulator''s '
'scheduled run in one slot row, ending (p_holds) on a tick within its lease.';

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
    -- starts from the end of its run.
    WITH RECURSIVE s AS (
        SELECT st.tick, extract(EPOCH FROM st.tick) AS secs FROM tickq.settings AS st
    ),
    k AS (
        SELECT k.name, k.priority, k.catch_up, tickq.schedule_of(k) AS sched, (p_holds ->> k.name)::interval AS hold,
            CASE WHEN k.run_id IS NULL THEN k.due_at
                ELSE coalesce(tickq.next_slot(tickq.schedule_of(k), r.ends_at), r.ends_at + interval '1 day') END AS due
        FROM tickq.job_kind AS k
        LEFT JOIN LATERAL (
            SELECT r.claimed_at + (p_holds ->> k.name)::interval AS ends_at FROM tickq.job_run AS r
            WHERE r.id = k.run_id OFFSET 0
        ) AS r ON true
        WHERE tickq.kind_claimable(k)
            AND ((k.run_id IS NULL AND k.due_at <= p_until) OR (k.run_id IS NOT NULL AND r.ends_at <= p_until))
    ),
    runs (kind, priority, catch_up, sched, hold, due, claimed) AS (
        SELECT k.name, k.priority, k.catch_up, k.sched, k.hold, k.due,
            greatest(p_from, p_from + s.tick * ceil(extract(EPOCH FROM k.due - p_from) / s.secs))
        FROM k CROSS JOIN s
        UNION ALL
        SELECT r.kind, r.priority, r.catch_up, r.sched, r.hold, n.due,
            greatest(p_from, p_from + s.tick * ceil(extract(EPOCH FROM n.due - p_from) / s.secs))
        FROM runs AS r
        CROSS JOIN s
        CROSS JOIN LATERAL (
            SELECT coalesce(tickq.next_slot(r.sched, r.claimed + r.hold), r.claimed + r.hold + interval '1 day') AS due
        ) AS n
        WHERE r.claimed <= p_until AND r.claimed + r.hold <= p_until
    )
    SELECT r.kind, r.priority, r.due, r.claimed, r.claimed + r.hold, r.catch_up
    FROM runs AS r
    WHERE r.claimed <= p_until
$$;
COMMENT ON FUNCTION tickq.simulation_calm_runs(timestamptz, timestamptz, jsonb) IS
'For tickq.simulation_calm: the runs each claimable kind would have claimed from p_from through '
'p_until were no kind ever kept waiting: its due time, claimed at the first tick at or after it, '
'ending its hold (p_holds) later, the next due time its next slot after that end '
'(tickq.finish_run''s rule). A kind running at p_from starts from its run''s end.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm_short(
    p_from timestamptz,
    p_claimed timestamptz[],
    p_ends timestamptz[],
    p_dues timestamptz[],
    p_catch_ups interval[],
    p_holds jsonb
) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    -- The runs going on at p_from and those of p_claimed .. p_ends: at each claim instant, the
    -- runs holding a slot then (a run ending at that instant is reported before the claim).
    WITH runs AS (
        SELECT u.claimed, u.ends FROM unnest(p_claimed, p_ends) AS u (claimed, ends)
        UNION ALL
        SELECT r.claimed_at, r.claimed_at + (p_holds ->> r.kind)::interval
        FROM tickq.slot AS sl
        CROSS JOIN LATERAL (SELECT r.* FROM tickq.job_run AS r WHERE r.id = sl.run_id OFFSET 0) AS r
        WHERE sl.run_id IS NOT NULL
    ),
    rows AS (SELECT count(*) AS n FROM tickq.slot AS sl CROSS JOIN tickq.settings AS s WHERE sl.n <= s.slots)
    SELECT min(t.at) FROM (
        SELECT i.at FROM (SELECT DISTINCT c AS at FROM unnest(p_claimed) AS c) AS i CROSS JOIN rows
        WHERE (SELECT count(*) FROM runs AS r WHERE r.claimed <= i.at AND r.ends > i.at) > rows.n
        UNION ALL
        -- a kind that would skip slots for its catch_up before its claim
        SELECT u.claimed FROM unnest(p_claimed, p_dues, p_catch_ups) AS u (claimed, due, catch_up)
        WHERE u.due < u.claimed - u.catch_up
    ) AS t
$$;
COMMENT ON FUNCTION tickq.simulation_calm_short(
    timestamptz, timestamptz[], timestamptz[], timestamptz[], interval[], jsonb
) IS
'For tickq.simulation_calm: the first claim instant of the runs p_claimed .. p_ends (their due times '
'and their kinds'' catch_up beside them) at which they and the runs going on at p_from would hold '
'more slot rows than there are, or a kind would skip slots for its catch_up; NULL when none.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm_write(
    p_kinds text[],
    p_dues timestamptz[],
    p_claimed timestamptz[],
    p_ends timestamptz[],
    p_rows integer[],
    p_end timestamptz,
    p_holds jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_first bigint;
    v_lease interval;
    v_going bigint[];
BEGIN
    -- What the claims and reports of a calm stretch write, in one statement each: the runs going on
    -- that end before p_end reported (tickq.finish_run with outcome ok and no duration given); the
    -- runs p_kinds .. p_rows opened in that order (the claim order) as tickq.claim_open_runs opens
    -- them, those ending before p_end reported; each kind as its last claim or report left it; the
    -- slot rows of the runs still going on.
    SELECT greatest(s.lease, (SELECT d.lease FROM tickq.dispatcher AS d WHERE d.name = 'simulator'))
    INTO STRICT v_lease FROM tickq.settings AS s;
    -- The runs going on, each read by its primary key (OFFSET 0: whatever the planner thinks of
    -- the history's size).
    v_going := ARRAY(SELECT sl.run_id FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL);
    WITH ended AS (
        UPDATE tickq.job_run AS r SET finished_at = r.claimed_at + (p_holds ->> r.kind)::interval, outcome = 'ok',
            exit_code = 0, output_tail = NULL,
            duration = greatest(r.claimed_at + (p_holds ->> r.kind)::interval - coalesce(r.started_at, r.claimed_at),
                '0'::interval)
        WHERE r.id = ANY(v_going) AND r.claimed_at + (p_holds ->> r.kind)::interval < p_end
        RETURNING r.id, r.kind, r.finished_at
    ),
    freed AS (
        UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL FROM ended AS e WHERE sl.run_id = e.id
    )
    UPDATE tickq.job_kind AS k SET run_id = NULL, leased_by = NULL, leased_until = NULL, last_run_id = e.id,
        failure_streak = 0, attempts = 0, next_trigger = 'schedule', updated_at = e.finished_at,
        due_at = coalesce(tickq.next_slot(tickq.schedule_of(k), e.finished_at), e.finished_at + interval '1 day')
    FROM ended AS e WHERE k.name = e.kind;
    IF cardinality(p_kinds) = 0 THEN
        RETURN;
    END IF;
    SELECT CASE WHEN q.is_called THEN q.last_value + 1 ELSE q.last_value END INTO v_first FROM tickq.job_run_id_seq AS q;
    PERFORM setval(pg_get_serial_sequence('tickq.job_run', 'id'), v_first + cardinality(p_kinds) - 1);
    -- The runs, then each kind as its last run left it and the slot rows of those going on, from
    -- what the insert returns.
    WITH runs AS (
        INSERT INTO tickq.job_run (id, kind, attempt, run_trigger, slots, dispatcher, claimed_at, finished_at, outcome,
            exit_code, duration, due_at, slot_row, slot_at, first_slot_at, slots_covered, weight, pools)
        OVERRIDING SYSTEM VALUE
        SELECT v_first + u.i - 1, u.kind, 1, 'schedule', c.n, 'simulator', u.claimed,
            CASE WHEN u.ends < p_end THEN u.ends END,
            CASE WHEN u.ends < p_end THEN 'ok' ELSE 'running' END::tickq.outcome,
            CASE WHEN u.ends < p_end THEN 0 END, CASE WHEN u.ends < p_end THEN u.ends - u.claimed END,
            u.due, u.slot_row,
            CASE WHEN c.n > 1 THEN tickq.last_slot(tickq.schedule_of(k), u.due, u.claimed) ELSE u.due END, u.due, c.n,
            k.weight, k.pools
        FROM unnest(p_kinds, p_dues, p_claimed, p_ends, p_rows) WITH ORDINALITY AS u (kind, due, claimed, ends, slot_row, i)
        INNER JOIN tickq.job_kind AS k ON k.name = u.kind
        CROSS JOIN LATERAL (SELECT 1 + tickq.slots_between(tickq.schedule_of(k), u.due, u.claimed) AS n OFFSET 0) AS c
        ORDER BY u.i
        RETURNING id, kind, claimed_at, due_at, slot_at, first_slot_at, slots_covered, slot_row, outcome
    ),
    held AS (
        UPDATE tickq.slot AS sl SET run_id = r.id, leased_until = r.claimed_at + v_lease
        FROM runs AS r WHERE r.outcome = 'running' AND sl.n = r.slot_row
    )
    UPDATE tickq.job_kind AS k SET
        run_id = CASE WHEN l.going THEN l.id END,
        leased_by = CASE WHEN l.going THEN 'simulator' END,
        leased_until = CASE WHEN l.going THEN l.claimed_at + v_lease END,
        attempts = CASE WHEN l.going THEN 1 ELSE 0 END,
        last_run_id = CASE WHEN l.going THEN coalesce(l.before_id, k.last_run_id) ELSE l.id END,
        failure_streak = CASE WHEN NOT l.going OR l.before_id IS NOT NULL THEN 0 ELSE k.failure_streak END,
        next_trigger = 'schedule',
        due_at = CASE WHEN l.going THEN l.due_at ELSE coalesce(tickq.next_slot(tickq.schedule_of(k), l.ends),
            l.ends + interval '1 day') END,
        slot_at = l.slot_at, first_slot_at = l.first_slot_at, slots_covered = l.slots_covered,
        updated_at = CASE WHEN l.going THEN l.claimed_at ELSE l.ends END
    FROM (
        SELECT DISTINCT ON (r.kind) r.kind, r.id, r.claimed_at, r.claimed_at + (p_holds ->> r.kind)::interval AS ends,
            r.outcome = 'running' AS going, r.due_at, r.slot_at, r.first_slot_at, r.slots_covered,
            lag(r.id) OVER (PARTITION BY r.kind ORDER BY r.id) AS before_id
        FROM runs AS r
        ORDER BY r.kind, r.id DESC
    ) AS l
    WHERE k.name = l.kind;
END
$$;
COMMENT ON FUNCTION tickq.simulation_calm_write(
    text[], timestamptz[], timestamptz[], timestamptz[], integer[], timestamptz, jsonb, timestamptz
) IS
'For tickq.simulation_calm: writes a calm stretch as its claims and reports would: the runs going on '
'that end (p_holds) before p_end reported ok, the runs of p_kinds (due times, claim instants, ends, '
'slot rows beside them) opened in that order with the next ids, those ending before p_end reported '
'ok, each kind as its last claim or report left it, and the slot rows of the runs still going on.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm(
    p_from timestamptz,
    p_until timestamptz,
    p_holds jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql
AS $$
DECLARE
    v_kinds text[];
    v_dues timestamptz[];
    v_claimed timestamptz[];
    v_ends timestamptz[];
    v_catch_ups interval[];
    v_short timestamptz;
    v_count integer;
    v_rows integer[];
    v_busy timestamptz[];
    v_slot_rows integer[] := '{}'::integer[];
    v_free integer[];
    v_i integer := 1;
    v_j integer;
BEGIN
    -- The part from p_from through p_until as far as it is calm: returns the instant from which
    -- the real loop must go on (NULL: the whole part was written; p_from: nothing was).
    IF NOT tickq.simulation_calm_state(p_from, p_holds) THEN
        RETURN p_from;
    END IF;
    -- Short at p_from already (a starving queue, part after part): nothing to work out.
    IF (SELECT count(*) FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL)
        + (SELECT count(*) FROM tickq.job_kind AS k
            WHERE tickq.kind_claimable(k) AND k.run_id IS NULL AND k.due_at <= p_from)
        > (SELECT count(*) FROM tickq.slot AS sl CROSS JOIN tickq.settings AS s WHERE sl.n <= s.slots) THEN
        RETURN p_from;
    END IF;
    -- The runs in time order and, at one instant, in claim order (tickq.claim_candidates).
    SELECT coalesce(array_agg(r.kind ORDER BY r.claimed_at, r.st DESC, r.stale_due, r.priority, r.due_at, r.kind), '{}'),
        coalesce(array_agg(r.due_at ORDER BY r.claimed_at, r.st DESC, r.stale_due, r.priority, r.due_at, r.kind), '{}'),
        coalesce(array_agg(r.claimed_at ORDER BY r.claimed_at, r.st DESC, r.stale_due, r.priority, r.due_at, r.kind), '{}'),
        coalesce(array_agg(r.ends_at ORDER BY r.claimed_at, r.st DESC, r.stale_due, r.priority, r.due_at, r.kind), '{}'),
        coalesce(array_agg(r.catch_up ORDER BY r.claimed_at, r.st DESC, r.stale_due, r.priority, r.due_at, r.kind), '{}')
    INTO v_kinds, v_dues, v_claimed, v_ends, v_catch_ups
    FROM (
        SELECT c.*, c.due_at <= c.claimed_at - s.stale_after AS st,
            CASE WHEN c.due_at <= c.claimed_at - s.stale_after THEN c.due_at END AS stale_due
        FROM tickq.simulation_calm_runs(p_from, p_until, p_holds) AS c CROSS JOIN tickq.settings AS s
    ) AS r;
    v_short := tickq.simulation_calm_short(p_from, v_claimed, v_ends, v_dues, v_catch_ups, p_holds);
    IF v_short = p_from THEN
        RETURN p_from;
    END IF;
    v_count := (SELECT count(*) FROM unnest(v_claimed) AS c WHERE c < coalesce(v_short, 'infinity'))::integer;
    -- Slot rows as claim_plain takes them: at each instant the lowest free ones, in claim order.
    SELECT array_agg(sl.n ORDER BY sl.n), array_agg(r.ends ORDER BY sl.n) INTO v_rows, v_busy
    FROM tickq.slot AS sl
    CROSS JOIN tickq.settings AS s
    LEFT JOIN LATERAL (
        SELECT r.claimed_at + (p_holds ->> r.kind)::interval AS ends FROM tickq.job_run AS r WHERE r.id = sl.run_id OFFSET 0
    ) AS r ON true
    WHERE sl.n <= s.slots;
    WHILE v_i <= v_count LOOP
        v_j := v_i;
        WHILE v_j < v_count AND v_claimed[v_j + 1] = v_claimed[v_i] LOOP
            v_j := v_j + 1;
        END LOOP;
        v_free := ARRAY(SELECT g FROM generate_subscripts(v_rows, 1) AS g
            WHERE v_busy[g] IS NULL OR v_busy[g] <= v_claimed[v_i] ORDER BY g LIMIT v_j - v_i + 1);
        IF cardinality(v_free) < v_j - v_i + 1 THEN
            RAISE EXCEPTION 'simulation_calm: % runs at % but % free slot rows', v_j - v_i + 1, v_claimed[v_i],
                cardinality(v_free) USING ERRCODE = 'internal_error';
        END IF;
        FOR q IN v_i..v_j LOOP
            v_slot_rows[q] := v_rows[v_free[q - v_i + 1]];
            v_busy[v_free[q - v_i + 1]] := v_ends[q];
        END LOOP;
        v_i := v_j + 1;
    END LOOP;
    PERFORM tickq.simulation_calm_write(v_kinds[1:v_count], v_dues[1:v_count], v_claimed[1:v_count],
        v_ends[1:v_count], v_slot_rows, coalesce(v_short, p_until + interval '1 microsecond'), p_holds);
    RETURN v_short;
END
$$;
COMMENT ON FUNCTION tickq.simulation_calm(timestamptz, timestamptz, jsonb, timestamptz) IS
'For the simulator: the part from p_from through p_until written without the claim and report loop '
'as far as the slots never run short (tickq.simulation_calm_runs, tickq.simulation_calm_short, '
'tickq.simulation_calm_write); returns the instant from which tickq.simulation_events must go on: '
'NULL when the whole part was written, p_from when nothing was (the queue''s state at p_from is not '
'one it can go on from: tickq.simulation_calm_state). p_holds: tickq.simulation_holds.';

CREATE OR REPLACE FUNCTION tickq.simulation_part(
    p_from timestamptz,
    p_until timestamptz,
    p_holds jsonb,
    p_calm boolean,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_from timestamptz := p_from;
BEGIN
    IF p_calm THEN
        v_from := tickq.simulation_calm(p_from, p_until, p_holds);
    END IF;
    IF v_from IS NOT NULL THEN
        PERFORM tickq.simulation_events(p_until, p_holds, v_from);
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.simulation_part(timestamptz, timestamptz, jsonb, boolean, timestamptz) IS
'For tickq.simulate_window: one part of the clock, from p_from through p_until: with p_calm '
'(tickq.simulation_calm_allowed) as far as it is calm without the claim and report loop '
'(tickq.simulation_calm), the rest through it (tickq.simulation_events). Scratch databases only.';
