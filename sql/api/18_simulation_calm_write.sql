-- The writes of a calm stretch of the simulator's clock (tickq.simulation_calm, in
-- 18_simulation_calm.sql): the runs, the kinds and the slot rows as the claims and reports the
-- stretch stands for would have left them.

CREATE OR REPLACE FUNCTION tickq.simulation_calm_write(
    p_kinds text[],
    p_dues timestamptz[],
    p_claimed timestamptz[],
    p_ends timestamptz[],
    p_rows integer[],
    p_end timestamptz,
    p_holds jsonb,
    p_next_kinds text[],
    p_next_dues timestamptz[],
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
        due_at = coalesce(e.next_due,
            tickq.next_slot(tickq.schedule_of(k), e.finished_at), e.finished_at + interval '1 day')
    FROM (SELECT e.*, n.due AS next_due FROM ended AS e
        LEFT JOIN unnest(p_next_kinds, p_next_dues) AS n (kind, due) ON n.kind = e.kind) AS e
    WHERE k.name = e.kind;
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
            CASE WHEN c.n > 1 THEN tickq.last_slot(tickq.schedule_of(k.kind), u.due, u.claimed) ELSE u.due END, u.due, c.n,
            -- no kind a calm stretch writes has a weight or pools (tickq.simulation_calm_allowed)
            1, '{}'::text[]
        FROM unnest(p_kinds, p_dues, p_claimed, p_ends, p_rows) WITH ORDINALITY AS u (kind, due, claimed, ends, slot_row, i)
        -- the kind read only for a run claimed after its due time: only it may cover more than one slot
        LEFT JOIN LATERAL (
            SELECT k AS kind FROM tickq.job_kind AS k WHERE k.name = u.kind AND u.due < u.claimed OFFSET 0
        ) AS k ON true
        CROSS JOIN LATERAL (
            SELECT CASE WHEN k.kind IS NULL THEN 1 ELSE 1 + tickq.slots_between(tickq.schedule_of(k.kind), u.due, u.claimed)
                END AS n OFFSET 0
        ) AS c
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
        due_at = CASE WHEN l.going THEN l.due_at ELSE coalesce(l.next_due, tickq.next_slot(tickq.schedule_of(k), l.ends),
            l.ends + interval '1 day') END,
        slot_at = l.slot_at, first_slot_at = l.first_slot_at, slots_covered = l.slots_covered,
        updated_at = CASE WHEN l.going THEN l.claimed_at ELSE l.ends END
    FROM (
        SELECT DISTINCT ON (r.kind) r.kind, r.id, r.claimed_at, r.claimed_at + (p_holds ->> r.kind)::interval AS ends,
            r.outcome = 'running' AS going, r.due_at, r.slot_at, r.first_slot_at, r.slots_covered,
            lag(r.id) OVER (PARTITION BY r.kind ORDER BY r.id) AS before_id, n.due AS next_due
        FROM runs AS r
        LEFT JOIN unnest(p_next_kinds, p_next_dues) AS n (kind, due) ON n.kind = r.kind
        ORDER BY r.kind, r.id DESC
    ) AS l
    WHERE k.name = l.kind;
END
$$;
COMMENT ON FUNCTION tickq.simulation_calm_write(
    text[], timestamptz[], timestamptz[], timestamptz[], integer[], timestamptz, jsonb, text[], timestamptz[],
    timestamptz
) IS
'For tickq.simulation_calm: writes a calm stretch as its claims and reports would: the runs going on '
'that end (p_holds) before p_end reported ok, the runs of p_kinds (due times, claim instants, ends, '
'slot rows beside them) opened in that order with the next ids, those ending before p_end reported '
'ok, each kind as its last claim or report left it (a kind whose last run ended due at its due time '
'in p_next_kinds .. p_next_dues, else at its next slot), and the slot rows of the runs still going on.';
