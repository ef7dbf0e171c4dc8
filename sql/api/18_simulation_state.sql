-- Where the simulator's clock stands, and a stretch copied from an earlier one (for
-- tickq.simulate_window, 19_simulate_window.sql). What happens from an instant on depends only on
-- what claims and reports read then, relative to that instant, and on the kinds' slots from
-- there: every kind that is not simply waiting for its next slot (running, waiting past its
-- slot, between retries), its run, and the slot and pool rows held (tickq.simulation_state).
-- Where that is the same at two instants some days apart and every kind's slots repeat from the
-- earlier on (18_repeats.sql), the clock from the later one makes the same runs those days
-- later: they are copied (simulation_copy_runs) and the state restored as it stood at the copied
-- stretch's end (simulation_restore).

CREATE OR REPLACE FUNCTION tickq.simulation_state(
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- Times in seconds from p_now; no run ids (tickq.simulation_running has them), so the same
    -- state at two instants is the same jsonb. A kind waiting for its next slot (not leased, at
    -- its first try, due at or after p_now) is left out: its due time is its next slot at or
    -- after p_now (every write of it is the next slot after an earlier instant), which the
    -- schedule gives.
    SELECT jsonb_build_object(
        'kinds', coalesce((
            SELECT jsonb_agg(jsonb_build_array(k.name, extract(EPOCH FROM k.due_at - p_now), k.attempts,
                k.next_trigger, CASE WHEN k.run_id IS NOT NULL OR k.next_trigger = 'retry' THEN jsonb_build_array(
                    extract(EPOCH FROM k.slot_at - p_now), extract(EPOCH FROM k.first_slot_at - p_now), k.slots_covered)
                END,
                CASE WHEN k.run_id IS NOT NULL THEN jsonb_build_array(k.leased_by, extract(EPOCH FROM k.leased_until - p_now),
                    extract(EPOCH FROM r.claimed_at - p_now), r.attempt, r.run_trigger, r.slots, r.slot_row,
                    extract(EPOCH FROM r.due_at - p_now), r.dispatcher, r.run_by)
                END) ORDER BY k.name)
            FROM tickq.job_kind AS k
            LEFT JOIN LATERAL (SELECT r.* FROM tickq.job_run AS r WHERE r.id = k.run_id OFFSET 0) AS r ON true
            WHERE k.enabled AND (k.run_id IS NOT NULL OR k.leased_by IS NOT NULL OR k.due_at < p_now OR k.attempts <> 0
                OR k.next_trigger <> 'schedule')), '[]'),
        'slots', coalesce((
            SELECT jsonb_agg(jsonb_build_array(sl.n, r.kind, extract(EPOCH FROM sl.leased_until - p_now)) ORDER BY sl.n)
            FROM tickq.slot AS sl
            LEFT JOIN LATERAL (SELECT r.kind FROM tickq.job_run AS r WHERE r.id = sl.run_id OFFSET 0) AS r ON true
            WHERE sl.run_id IS NOT NULL OR sl.leased_until IS NOT NULL), '[]'),
        'pools', coalesce((
            SELECT jsonb_agg(jsonb_build_array(ps.pool, ps.n, r.kind, extract(EPOCH FROM ps.leased_until - p_now))
                ORDER BY ps.pool, ps.n)
            FROM tickq.pool_slot AS ps
            LEFT JOIN LATERAL (SELECT r.kind FROM tickq.job_run AS r WHERE r.id = ps.run_id OFFSET 0) AS r ON true
            WHERE ps.run_id IS NOT NULL OR ps.leased_until IS NOT NULL), '[]'))
$$;
COMMENT ON FUNCTION tickq.simulation_state(timestamptz) IS
'For the simulator, in a scratch database: what claims and reports read from p_now on, relative to '
'p_now (times in seconds from it): each enabled kind that is not waiting for its next slot (its due '
'time, tries, trigger, lease and run), and the slot and pool rows held, by kind. Two instants with '
'the same state go on the same way where the kinds'' slots repeat.';

CREATE OR REPLACE FUNCTION tickq.simulation_running() RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(jsonb_object_agg(k.name, k.run_id), '{}')
    FROM tickq.job_kind AS k
    WHERE k.run_id IS NOT NULL
$$;
COMMENT ON FUNCTION tickq.simulation_running() IS
'For the simulator: the run each leased kind holds, by kind name (the ids tickq.simulation_state '
'leaves out).';

CREATE OR REPLACE FUNCTION tickq.simulation_remap(
    p_ids jsonb,
    p_first bigint,
    p_offset bigint,
    p_going jsonb
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    -- A run of the copied stretch (id p_first or later) is its copy, p_offset further; one from
    -- before the stretch is the run of the same kind going on where the copy began (p_going).
    SELECT coalesce(jsonb_object_agg(r.key, CASE WHEN r.value::bigint >= p_first THEN to_jsonb(r.value::bigint + p_offset)
        ELSE p_going -> r.key END), '{}')
    FROM jsonb_each_text(p_ids) AS r
$$;
COMMENT ON FUNCTION tickq.simulation_remap(jsonb, bigint, bigint, jsonb) IS
'For the simulator''s copies: run ids by kind (tickq.simulation_running) as they are in the copy of '
'a stretch whose first run is p_first, copied p_offset ids on, begun where p_going ran.';

CREATE OR REPLACE FUNCTION tickq.simulation_copy_runs(
    p_until timestamptz,
    p_shift interval,
    p_first bigint,
    p_end bigint,
    p_offset bigint,
    p_was jsonb,
    p_going jsonb,
    p_rows integer[] DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- The runs going on now (p_going, by kind) went on p_shift earlier too (p_was):
    -- those that ended before p_until end the same way, p_shift later.
    UPDATE tickq.job_run AS r SET
        finished_at = o.finished_at + p_shift, outcome = o.outcome, exit_code = o.exit_code,
        output_tail = o.output_tail, duration = o.duration, late_report_at = o.late_report_at + p_shift
    FROM jsonb_each_text(p_was) AS w (kind, id)
    INNER JOIN tickq.job_run AS o ON o.id = w.id::bigint
    WHERE r.id = (p_going ->> w.kind)::bigint AND o.finished_at < p_until;
    -- The runs claimed in the stretch copied, until p_until (ids p_first until p_end: a window's runs are
    -- numbered in claim order), p_shift later and p_offset ids on (so the ids keep that order);
    -- those still going on at p_until as they were then; in the slot rows p_rows names (by id
    -- less p_first, plus one: tickq.simulation_relabel), else those they took then.
    INSERT INTO tickq.job_run (id, kind, attempt, run_trigger, slots, dispatcher, claimed_at, started_at, finished_at,
        outcome, exit_code, output_tail, duration, due_at, slot_row, late_report_at, run_by, slot_at, first_slot_at,
        slots_covered, weight, pools)
    OVERRIDING SYSTEM VALUE
    SELECT r.id + p_offset, r.kind, r.attempt, r.run_trigger, r.slots, r.dispatcher, r.claimed_at + p_shift,
        r.started_at + p_shift, CASE WHEN r.finished_at < p_until THEN r.finished_at + p_shift END,
        CASE WHEN r.finished_at < p_until THEN r.outcome ELSE 'running' END,
        CASE WHEN r.finished_at < p_until THEN r.exit_code END,
        CASE WHEN r.finished_at < p_until THEN r.output_tail END,
        CASE WHEN r.finished_at < p_until THEN r.duration END, r.due_at + p_shift,
        coalesce(p_rows[r.id - p_first + 1], r.slot_row),
        CASE WHEN r.finished_at < p_until THEN r.late_report_at + p_shift END, r.run_by, r.slot_at + p_shift,
        r.first_slot_at + p_shift, r.slots_covered, r.weight, r.pools
    FROM tickq.job_run AS r
    WHERE r.id >= p_first AND r.id < p_end;  -- in no order: each run's id is given (a sort cost a fifth)
    PERFORM setval(pg_get_serial_sequence('tickq.job_run', 'id'), p_end - 1 + p_offset)
    WHERE p_end > p_first;
END
$$;
COMMENT ON FUNCTION tickq.simulation_copy_runs(
    timestamptz, interval, bigint, bigint, bigint, jsonb, jsonb, integer[], timestamptz
) IS
'For the simulator''s copies: the runs claimed in the stretch copied, until p_until (ids p_first '
'until p_end), inserted p_shift later with ids p_offset on, those still going on at p_until as '
'going on, in the slot rows p_rows names where it names one (by id less p_first, plus one); and '
'the runs going on now (p_going, by kind) ended as those going on p_shift earlier (p_was) ended '
'before p_until.';

CREATE OR REPLACE FUNCTION tickq.simulation_dues() RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- A json array in the order of the kinds' names, bytes compared (as tickq.simulation_restore
    -- reads it), not an object by name: that cost twice as much, read at every part's start.
    SELECT coalesce(to_jsonb(array_agg(k.due_at ORDER BY k.name COLLATE "C")), '[]') FROM tickq.job_kind AS k
$$;
COMMENT ON FUNCTION tickq.simulation_dues() IS
'For the simulator''s copies: every kind''s due time, as a json array in the order of the kinds'' names '
'(bytes compared). A kind waiting for its next slot is due at that slot (tickq.simulation_state).';

CREATE OR REPLACE FUNCTION tickq.simulation_restore(
    p_at timestamptz,
    p_state jsonb,
    p_ids jsonb,
    p_since timestamptz DEFAULT NULL,
    p_dues jsonb DEFAULT NULL,
    p_later interval DEFAULT NULL,
    p_trust timestamptz DEFAULT NULL
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- Every kind waiting for its next slot at or after p_at; those p_state names as it says,
    -- relative to p_at, with the runs p_ids names; the slot and pool rows likewise. Only the
    -- kinds due before p_at, or named by p_state, are written, each once: a kind p_state names
    -- takes no next slot (its due time is p_state's).
    -- A copy (begun at p_since) passes the due times at the end of the stretch copied (p_dues,
    -- tickq.simulation_dues then, p_later before the instants they stand for at p_at; exact
    -- before p_trust). A kind waiting at p_since for a slot before p_at has a slot in the copy,
    -- so it had the same slots in the stretch copied, and the same first one after it (not a
    -- kind with no slot in either: 18_repeats.sql): its next slot is the one it waited for at
    -- the stretch's end, p_later on, not worked out again.
    UPDATE tickq.job_kind AS k SET
        due_at = CASE WHEN e.value IS NOT NULL THEN p_at + make_interval(secs => (e.value ->> 1)::double precision)
            WHEN (p_dues ->> d.i)::timestamptz < p_trust AND k.due_at >= p_since AND k.run_id IS NULL
                AND k.leased_by IS NULL AND k.attempts = 0 AND k.next_trigger = 'schedule'
                THEN (p_dues ->> d.i)::timestamptz + p_later
            ELSE coalesce(tickq.next_slot(tickq.schedule_of(k), p_at - interval '1 microsecond'), p_at + interval '1 day')
            END,
        attempts = coalesce((e.value ->> 2)::integer, 0),
        next_trigger = coalesce((e.value ->> 3)::tickq.run_trigger, 'schedule'),
        slot_at = CASE WHEN e.value -> 4 <> 'null' THEN p_at + make_interval(secs => (e.value -> 4 ->> 0)::double precision)
            ELSE k.slot_at END,
        first_slot_at = CASE WHEN e.value -> 4 <> 'null'
            THEN p_at + make_interval(secs => (e.value -> 4 ->> 1)::double precision) ELSE k.first_slot_at END,
        slots_covered = CASE WHEN e.value -> 4 <> 'null' THEN (e.value -> 4 ->> 2)::integer ELSE k.slots_covered END,
        run_id = (p_ids ->> (e.value ->> 0))::bigint,
        leased_by = e.value -> 5 ->> 0,
        leased_until = p_at + make_interval(secs => (e.value -> 5 ->> 1)::double precision)
    FROM tickq.job_kind AS j
    LEFT JOIN jsonb_array_elements(p_state -> 'kinds') AS e (value) ON j.name = e.value ->> 0
    LEFT JOIN (SELECT o.name, (row_number() OVER (ORDER BY o.name COLLATE "C"))::integer - 1 AS i
        FROM tickq.job_kind AS o WHERE p_dues IS NOT NULL) AS d ON j.name = d.name
    WHERE k.name = j.name AND (e.value IS NOT NULL OR k.enabled AND (k.due_at < p_at OR k.run_id IS NOT NULL
        OR k.leased_by IS NOT NULL OR k.attempts <> 0 OR k.next_trigger <> 'schedule'));
    UPDATE tickq.slot AS sl SET run_id = NULL, leased_until = NULL
    WHERE sl.run_id IS NOT NULL OR sl.leased_until IS NOT NULL;
    UPDATE tickq.slot AS sl SET run_id = (p_ids ->> (e.value ->> 1))::bigint,
        leased_until = p_at + make_interval(secs => (e.value ->> 2)::double precision)
    FROM jsonb_array_elements(p_state -> 'slots') AS e (value)
    WHERE sl.n = (e.value ->> 0)::integer;
    UPDATE tickq.pool_slot AS ps SET run_id = NULL, leased_until = NULL
    WHERE ps.run_id IS NOT NULL OR ps.leased_until IS NOT NULL;
    UPDATE tickq.pool_slot AS ps SET run_id = (p_ids ->> (e.value ->> 2))::bigint,
        leased_until = p_at + make_interval(secs => (e.value ->> 3)::double precision)
    FROM jsonb_array_elements(p_state -> 'pools') AS e (value)
    WHERE ps.pool = e.value ->> 0 AND ps.n = (e.value ->> 1)::integer;
END
$$;
COMMENT ON FUNCTION tickq.simulation_restore(timestamptz, jsonb, jsonb, timestamptz, jsonb, interval, timestamptz) IS
'For the simulator''s copies: puts the queue in the state p_state (tickq.simulation_state, relative to '
'p_at) with the runs p_ids names (by kind): every other kind waiting for its next slot at or after '
'p_at. Of a copy begun at p_since: a kind waiting then for a slot before p_at is due p_later after its '
'entry in p_dues (tickq.simulation_dues at the end of the stretch copied) where that is before p_trust.';

CREATE OR REPLACE FUNCTION tickq.simulation_copy(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_state jsonb,
    p_was jsonb,
    p_ended jsonb,
    p_going jsonb,
    p_first bigint,
    p_end bigint,
    p_next bigint,
    p_rows integer[] DEFAULT NULL,
    p_dues jsonb DEFAULT NULL,
    p_later interval DEFAULT NULL,
    p_trust timestamptz DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE sql
AS $$
    -- The stretch from p_from until p_until (its runs ids p_first until p_end; p_was and p_ended
    -- the runs going on at its ends, by kind) copied p_shift later, where the clock stands now
    -- (p_from + p_shift; p_going the runs going on, p_next the next run id), and the queue put
    -- in the state p_state (relative to p_until) p_shift later; the copied runs in the slot rows
    -- p_rows names, where it names one (tickq.simulation_relabel); p_dues the due times at
    -- p_until (tickq.simulation_dues then, p_later before the instants they stand for there,
    -- exact before p_trust) for tickq.simulation_restore.
    SELECT tickq.simulation_copy_runs(p_until, p_shift, p_first, p_end, p_next - p_first, p_was, p_going, p_rows);
    SELECT tickq.simulation_restore(p_until + p_shift, p_state,
        tickq.simulation_remap(p_ended, p_first, p_next - p_first, p_going), p_from + p_shift, p_dues,
        p_later + p_shift, p_trust)
$$;
COMMENT ON FUNCTION tickq.simulation_copy(
    timestamptz, timestamptz, interval, jsonb, jsonb, jsonb, jsonb, bigint, bigint, bigint, integer[], jsonb, interval,
    timestamptz, timestamptz
) IS
'For tickq.simulate_window: copies the stretch from p_from until p_until p_shift later '
'(tickq.simulation_copy_runs) and restores the state p_state, relative to p_until, p_shift later '
'(tickq.simulation_restore), the runs going on then remapped to their copies (tickq.simulation_remap); '
'the copied runs in the slot rows p_rows names where it names one (tickq.simulation_relabel); p_dues, '
'p_later, p_trust: the due times at p_until for the restore.';
