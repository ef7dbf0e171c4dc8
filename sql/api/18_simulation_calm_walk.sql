-- The instant-by-instant walk of a calm stretch (tickq.simulation_calm, in 18_simulation_calm.sql):
-- the slot rows each run takes, and where the slots run short, the runs that wait.
--
-- At an instant whose runs want more slot rows than are free, a claim takes the free ones in claim
-- order and the rest wait; every row is then held, so the clock claims nothing more until the
-- first of them comes free (tickq.simulation_events: while every slot is held, the next finish),
-- and there the runs that waited and those due by then are claimed, again in claim order (a
-- kind waiting longer than stale_after first). A run that waited ends later, so its kind's next
-- due time is worked out again from its new end, and the runs after it with it.

CREATE OR REPLACE FUNCTION tickq.simulation_calm_order(
    p_kinds text[],
    p_dues timestamptz[],
    p_claimed timestamptz[],
    p_ends timestamptz[],
    p_priorities tickq.priority[],
    p_catch_ups interval[]
) RETURNS TABLE (
    kinds text[], dues timestamptz[], claimed timestamptz[], ends timestamptz[], priorities tickq.priority[],
    catch_ups interval[]
)
LANGUAGE sql STABLE
AS $$
    -- The runs of a calm stretch in time order and, at one instant, in the claim's order
    -- (tickq.claim_candidates): a kind waiting stale_after or longer first, the longest waiting
    -- first, then priority, due time and name. The one place the calm stretches order runs.
    SELECT coalesce(array_agg(u.kind ORDER BY u.claimed, u.st DESC, u.stale_due, u.priority, u.due, u.kind), '{}'),
        coalesce(array_agg(u.due ORDER BY u.claimed, u.st DESC, u.stale_due, u.priority, u.due, u.kind), '{}'),
        coalesce(array_agg(u.claimed ORDER BY u.claimed, u.st DESC, u.stale_due, u.priority, u.due, u.kind), '{}'),
        coalesce(array_agg(u.ends ORDER BY u.claimed, u.st DESC, u.stale_due, u.priority, u.due, u.kind), '{}'),
        coalesce(array_agg(u.priority ORDER BY u.claimed, u.st DESC, u.stale_due, u.priority, u.due, u.kind), '{}'),
        coalesce(array_agg(u.catch_up ORDER BY u.claimed, u.st DESC, u.stale_due, u.priority, u.due, u.kind), '{}')
    FROM (
        SELECT u.*, u.due <= u.claimed - s.stale_after AS st,
            CASE WHEN u.due <= u.claimed - s.stale_after THEN u.due END AS stale_due
        FROM unnest(p_kinds, p_dues, p_claimed, p_ends, p_priorities, p_catch_ups)
            AS u (kind, due, claimed, ends, priority, catch_up)
        CROSS JOIN tickq.settings AS s
    ) AS u
$$;
COMMENT ON FUNCTION tickq.simulation_calm_order(
    text[], timestamptz[], timestamptz[], timestamptz[], tickq.priority[], interval[]
) IS
'For the calm stretches (tickq.simulation_calm, tickq.simulation_calm_wait): the runs p_kinds .. '
'p_catch_ups (kind, due time, claim instant, end, priority, catch_up side by side) in time order '
'and, at one instant, in the claim''s order (tickq.claim_candidates: a kind waiting stale_after or '
'longer first, the longest waiting first, then priority, due time, name).';

CREATE OR REPLACE FUNCTION tickq.simulation_calm_wait(
    p_kinds text[],
    p_dues timestamptz[],
    p_claimed timestamptz[],
    p_ends timestamptz[],
    p_priorities tickq.priority[],
    p_catch_ups interval[],
    p_next timestamptz,
    p_from timestamptz,
    p_until timestamptz
) RETURNS TABLE (
    kinds text[], dues timestamptz[], claimed timestamptz[], ends timestamptz[], priorities tickq.priority[],
    catch_ups interval[]
)
LANGUAGE sql STABLE
AS $$
    -- p_kinds .. p_catch_ups: the runs not yet given a row, in claim order; those claimed before
    -- p_next wait until p_next. Each waiting kind's first such run is claimed at p_next, its later
    -- runs are dropped and worked out again as tickq.simulation_calm_runs works them out (the next
    -- slot after the run ends, claimed at the first tick of p_from's grid at or after it, up to
    -- the first run after p_until); the rest stay; all in claim order at their instants.
    WITH RECURSIVE s AS (
        SELECT st.tick, extract(EPOCH FROM st.tick) AS secs FROM tickq.settings AS st
    ),
    runs AS (
        SELECT u.* FROM unnest(p_kinds, p_dues, p_claimed, p_ends, p_priorities, p_catch_ups)
            WITH ORDINALITY AS u (kind, due, claimed, ends, priority, catch_up, i)
    ),
    waiting AS (
        SELECT DISTINCT ON (r.kind) r.* FROM runs AS r WHERE r.claimed < p_next ORDER BY r.kind, r.i
    ),
    chain (kind, due, claimed, hold, priority, catch_up, sched) AS (
        SELECT w.kind, w.due, p_next, w.ends - w.claimed, w.priority, w.catch_up, tickq.schedule_of(k)
        FROM waiting AS w INNER JOIN tickq.job_kind AS k ON k.name = w.kind
        UNION ALL
        SELECT c.kind, n.due, greatest(p_from, p_from + s.tick * ceil(extract(EPOCH FROM n.due - p_from) / s.secs)),
            c.hold, c.priority, c.catch_up, c.sched
        FROM chain AS c
        CROSS JOIN s
        CROSS JOIN LATERAL (
            SELECT coalesce(tickq.next_slot(c.sched, c.claimed + c.hold), c.claimed + c.hold + interval '1 day') AS due
            OFFSET 0
        ) AS n
        WHERE c.claimed <= p_until AND c.claimed + c.hold <= p_until
    ),
    after AS (
        SELECT r.kind, r.due, r.claimed, r.ends, r.priority, r.catch_up FROM runs AS r
        WHERE NOT EXISTS (SELECT FROM waiting AS w WHERE w.kind = r.kind)
        UNION ALL
        SELECT c.kind, c.due, c.claimed, c.claimed + c.hold, c.priority, c.catch_up FROM chain AS c
    )
    SELECT o.* FROM (
        SELECT array_agg(a.kind) AS kinds, array_agg(a.due) AS dues, array_agg(a.claimed) AS claimed,
            array_agg(a.ends) AS ends, array_agg(a.priority) AS priorities, array_agg(a.catch_up) AS catch_ups
        FROM after AS a
    ) AS a
    CROSS JOIN LATERAL tickq.simulation_calm_order(a.kinds, a.dues, a.claimed, a.ends, a.priorities, a.catch_ups) AS o
$$;
COMMENT ON FUNCTION tickq.simulation_calm_wait(
    text[], timestamptz[], timestamptz[], timestamptz[], tickq.priority[], interval[], timestamptz, timestamptz,
    timestamptz
) IS
'For tickq.simulation_calm_walk, where the slots run short: the runs not yet given a slot row '
'(p_kinds .. p_catch_ups, in claim order) with those claimed before p_next waiting until p_next, '
'each waiting kind''s later runs worked out again from its run''s new end as '
'tickq.simulation_calm_runs works them out; all in claim order at their instants.';

CREATE OR REPLACE FUNCTION tickq.simulation_calm_walk(
    INOUT kinds text[],
    INOUT dues timestamptz[],
    INOUT claimed timestamptz[],
    INOUT ends timestamptz[],
    INOUT priorities tickq.priority[],
    INOUT catch_ups interval[],
    p_rows integer[],
    p_busy timestamptz[],
    p_from timestamptz,
    p_until timestamptz,
    OUT slot_rows integer[],
    OUT written integer,
    OUT short timestamptz
) RETURNS record
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_busy timestamptz[] := p_busy;
    v_free integer[];
    v_i integer := 1;
    v_j integer;
    v_next timestamptz;
    v_wait record;
BEGIN
    -- Instant by instant (the runs of the part come first, then each kind's first one after it):
    -- slot rows as claim_plain takes them, the lowest free ones in claim order. Where the runs of
    -- an instant want more rows than are free, the rest wait for the first row to come free
    -- (tickq.simulation_calm_wait). Up to the first instant where a kind would skip slots for its
    -- catch_up: the real loop goes on from there (short).
    slot_rows := '{}'::integer[];
    <<instants>>
    WHILE v_i <= cardinality(claimed) AND claimed[v_i] <= p_until LOOP
        v_j := v_i;
        WHILE v_j < cardinality(claimed) AND claimed[v_j + 1] = claimed[v_i] LOOP
            v_j := v_j + 1;
        END LOOP;
        FOR q IN v_i..v_j LOOP
            IF dues[q] < claimed[q] - catch_ups[q] THEN
                short := claimed[v_i];
                EXIT instants;
            END IF;
        END LOOP;
        v_free := ARRAY(SELECT g FROM generate_subscripts(p_rows, 1) AS g
            WHERE v_busy[g] IS NULL OR v_busy[g] <= claimed[v_i] ORDER BY g LIMIT v_j - v_i + 1);
        FOR q IN v_i..v_i + cardinality(v_free) - 1 LOOP
            slot_rows[q] := p_rows[v_free[q - v_i + 1]];
            v_busy[v_free[q - v_i + 1]] := ends[q];
        END LOOP;
        IF cardinality(v_free) < v_j - v_i + 1 THEN
            v_next := (SELECT min(b) FROM unnest(v_busy) AS b);
            IF v_next IS NULL THEN  -- no slot rows at all: the real loop's
                short := claimed[v_i];
                EXIT instants;
            END IF;
            v_i := v_i + cardinality(v_free);
            SELECT * INTO STRICT v_wait FROM tickq.simulation_calm_wait(kinds[v_i:], dues[v_i:], claimed[v_i:],
                ends[v_i:], priorities[v_i:], catch_ups[v_i:], v_next, p_from, p_until);
            kinds := kinds[:v_i - 1] || v_wait.kinds;
            dues := dues[:v_i - 1] || v_wait.dues;
            claimed := claimed[:v_i - 1] || v_wait.claimed;
            ends := ends[:v_i - 1] || v_wait.ends;
            priorities := priorities[:v_i - 1] || v_wait.priorities;
            catch_ups := catch_ups[:v_i - 1] || v_wait.catch_ups;
        ELSE
            v_i := v_j + 1;
        END IF;
    END LOOP;
    written := v_i - 1;
END
$$;
COMMENT ON FUNCTION tickq.simulation_calm_walk(
    text[], timestamptz[], timestamptz[], timestamptz[], tickq.priority[], interval[], integer[], timestamptz[],
    timestamptz, timestamptz
) IS
'For tickq.simulation_calm: the runs of a calm stretch (kinds .. catch_ups, in claim order) walked '
'instant by instant: the slot rows they take (p_rows, free from p_busy on), the lowest free ones in '
'claim order, and where more runs want rows than are free, the rest waiting for the first row to '
'come free (tickq.simulation_calm_wait, which also changes the runs after them). Returns the runs as '
'they are claimed, their slot rows, how many are written (claimed by p_until) and short, the first '
'instant where a kind would skip slots for its catch_up (the real loop''s), or NULL.';
