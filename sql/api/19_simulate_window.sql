-- The simulator's clock through a whole window (tickq.simulate_window): its parts, each committed
-- on its own, and the stretches it copies instead of simulating again: where the state a part
-- starts in (sql/api/18_simulation_state.sql) is that of a day or a week before and the stretch
-- from then repeats for every kind's slots (sql/api/18_repeats.sql; which stretch, in
-- 19_simulation_copy_choice.sql). The events of a part are sql/api/07_simulate.sql's.

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

CREATE OR REPLACE FUNCTION tickq.simulation_mark(
    OUT state jsonb,
    OUT digest text,
    OUT unlabelled text,
    OUT ids jsonb,
    OUT first_id bigint,
    OUT idle_until timestamptz,
    p_at timestamptz,
    p_copied boolean DEFAULT false,
    p_now timestamptz DEFAULT now()
)
LANGUAGE sql STABLE
AS $$
    -- The state at p_at (tickq.simulation_state) with its digest and that of its form without
    -- the slot rows' numbers (tickq.simulation_unlabelled), the runs going on by kind, the
    -- id the next run will get (a window's runs are numbered in claim order), and, when no run
    -- holds a slot, the due time before which nothing happens ('infinity': nothing is ever due).
    -- With p_copied (where a copy ended, which knows them) neither the digest without the slot
    -- rows' numbers nor the runs by kind (NULLs): they cost half as much as the state.
    -- That id is the sequence's, not the last run's plus one: in a database that simulated
    -- before, simulation_start let go of those runs but not of their ids, and a copy counted
    -- from a smaller id takes that many ids more, each copy and window more than the last
    -- (tests_sql/122-simulation-copy-ids.sql).
    SELECT s.state, md5(s.state::text), CASE WHEN p_copied IS NOT TRUE THEN md5(tickq.simulation_unlabelled(s.state)::text) END,
        CASE WHEN p_copied IS NOT TRUE THEN tickq.simulation_running() END,
        (SELECT CASE WHEN q.is_called THEN q.last_value + 1 ELSE q.last_value END
            FROM tickq.job_run_id_seq AS q),
        CASE WHEN NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL)
            THEN coalesce(tickq.simulation_next_due(), 'infinity') END
    FROM (SELECT tickq.simulation_state(p_at) AS state OFFSET 0) AS s  -- read once, not once per use
$$;
COMMENT ON FUNCTION tickq.simulation_mark(timestamptz, boolean, timestamptz) IS
'For tickq.simulate_window, at the start of a part: the state at p_at (tickq.simulation_state), '
'its md5 digest and that of its form without slot row numbers (tickq.simulation_unlabelled), the '
'runs going on by kind (tickq.simulation_running), the id the next run will get (job_run''s '
'sequence), and when no run holds a slot the next due time '
'(tickq.simulation_next_due; ''infinity'' when none). With p_copied (where a copy ended) the '
'digest without slot row numbers and the runs by kind are NULL.';

CREATE OR REPLACE FUNCTION tickq.simulation_stale(
    p_since bigint,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- A kind due stale_after ago or earlier still unclaimed, or a run from id p_since on (the
    -- runs of the parts since the last look) claimed that late or skipped past its catch_up.
    SELECT EXISTS (
            SELECT FROM tickq.job_kind AS k CROSS JOIN tickq.settings AS s
            WHERE k.enabled AND k.run_id IS NULL AND k.due_at <= p_now - s.stale_after)
        OR EXISTS (
            SELECT FROM tickq.job_run AS r CROSS JOIN tickq.settings AS s
            WHERE r.id >= p_since AND r.dispatcher = 'simulator'
                AND (r.outcome = 'skipped' OR r.claimed_at - r.due_at >= s.stale_after))
$$;
COMMENT ON FUNCTION tickq.simulation_stale(bigint, timestamptz) IS
'For tickq.simulate_window stopping at the first stale wait (check --suggest''s proposals): true '
'when at p_now a kind has waited stale_after or longer, or a run from id p_since on was claimed '
'that late or skipped slots past its catch_up.';

CREATE OR REPLACE PROCEDURE tickq.simulate_window(
    p_until timestamptz,
    p_durations jsonb DEFAULT NULL,
    p_steady boolean DEFAULT true,
    p_stop_stale boolean DEFAULT false,
    p_now timestamptz DEFAULT now()
)
LANGUAGE plpgsql
AS $$
DECLARE
    v_part record;
    v_len interval;
    v_grid timestamptz;
    v_count integer;
    v_b record;
    v_mark record;
    v_copy record;
    v_states jsonb[] := '{}'::jsonb[];
    v_fps text[] := '{}'::text[];
    v_ufps text[] := '{}'::text[];  -- the digests without slot row numbers (tickq.simulation_unlabelled)
    v_ids jsonb[] := '{}'::jsonb[];
    -- A copied part's runs by kind are worked out only when a later copy reads them (most are
    -- never read): until then v_ids is NULL there and the part names the part it was copied from
    -- (v_src), the run ids' offset (v_offset), the first id of the stretch copied (v_base) and the
    -- part where the copy began (v_goes), for tickq.simulation_remap.
    v_src integer[] := '{}'::integer[];
    v_goes integer[] := '{}'::integer[];
    v_base bigint[] := '{}'::bigint[];
    v_offset bigint[] := '{}'::bigint[];
    v_chain integer[];
    v_x integer;
    v_y integer;
    v_firsts bigint[] := '{}'::bigint[];
    -- By part, for the restores of copies: the due times at its start (tickq.simulation_dues) read
    -- there or at the part a copy took them from, v_later earlier; those before v_trust exact;
    -- NULL where not read.
    v_dues jsonb[] := '{}'::jsonb[];
    v_later interval[] := '{}'::interval[];
    v_trust timestamptz[] := '{}'::timestamptz[];
    v_kept integer := 1;  -- the parts before it are let go of
    v_rest text := md5(jsonb_build_object('kinds', '[]'::jsonb, 'slots', '[]'::jsonb, 'pools', '[]'::jsonb)::text);
    v_at timestamptz;
    v_idle timestamptz;
    v_n integer;
    v_holds jsonb;
    v_calm boolean;
    v_j integer;
    v_slots integer;
    v_rows integer[];
    v_maps integer[];
BEGIN
    -- Each part committed before the next starts (so the versions of the kind and slot rows it
    -- left can be pruned), with no round trip to the caller; at each part's start but the first
    -- (where irreversible kinds are armed) the state is kept (tickq.simulation_mark) for copies.
    SELECT * INTO v_holds, v_calm, v_grid, v_count, v_len, v_slots
    FROM tickq.simulation_window_start(p_until, p_durations, p_steady, p_now);
    v_b := tickq.simulation_window_breaks(p_until, v_len, p_now);
    FOR v_part IN SELECT p.part_from, p.part_until, row_number() OVER (ORDER BY p.part_from)::integer AS n
        FROM tickq.simulation_parts(p_until, p_now) AS p
    LOOP
        CONTINUE WHEN v_part.part_from < v_at;
        v_n := v_part.n;
        IF v_n > 1 AND v_part.part_until < v_idle THEN  -- nothing happens: at rest if it was
            v_fps[v_n] := CASE WHEN v_fps[v_n - 1] = v_rest THEN v_rest END;
            v_ufps[v_n] := v_fps[v_n];
            v_states[v_n] := CASE WHEN v_fps[v_n] = v_rest THEN v_states[v_n - 1] END;
            v_ids[v_n] := v_ids[v_n - 1];
            v_src[v_n] := v_src[v_n - 1];
            v_base[v_n] := v_base[v_n - 1];
            v_offset[v_n] := v_offset[v_n - 1];
            v_goes[v_n] := v_goes[v_n - 1];
            v_firsts[v_n] := v_firsts[v_n - 1];
            v_dues[v_n] := NULL;
            CONTINUE;
        ELSIF v_n > 1 THEN
            -- Where a copy ended, its digest without slot row numbers and its runs by kind are the
            -- copy's (set below, the runs worked out when read): the mark builds neither.
            v_mark := tickq.simulation_mark(v_part.part_from, v_part.part_from IS NOT DISTINCT FROM v_at);
            IF v_fps[v_n] <> v_mark.digest THEN  -- a copy must leave the state the clock would
                RAISE EXCEPTION 'simulate_window: the state at % is not the one copied there', v_part.part_from
                    USING ERRCODE = 'internal_error';
            END IF;
            EXIT WHEN p_stop_stale AND tickq.simulation_stale(v_firsts[v_n - 1], v_part.part_from);
            v_states[v_n] := v_mark.state;
            v_fps[v_n] := v_mark.digest;
            v_ufps[v_n] := coalesce(v_mark.unlabelled, v_ufps[v_n]);
            v_ids[v_n] := v_mark.ids;
            v_firsts[v_n] := v_mark.first_id;
            -- The due times only where a copy ended: a copy a day or a week later mostly ends
            -- there too, or in the stretch copied to there (as costly as the restores they spare
            -- when read at every part: a month end's parts are mostly simulated).
            v_dues[v_n] := CASE WHEN v_part.part_from = v_at THEN tickq.simulation_dues() END;
            v_later[v_n] := '0';
            v_trust[v_n] := 'infinity';
            -- A week back is enough (copies look back a day or a week): older states are let go of.
            FOR k IN v_kept..v_n - 8 * 86400 / extract(EPOCH FROM v_len)::integer LOOP
                v_states[k] := NULL;  -- not v_ids: a copied part's are worked out from older ones
                v_dues[k] := NULL;
            END LOOP;
            v_kept := greatest(v_kept, v_n - 8 * 86400 / extract(EPOCH FROM v_len)::integer + 1);
            v_idle := CASE WHEN v_mark.idle_until > v_part.part_until THEN v_mark.idle_until END;
            CONTINUE WHEN v_idle IS NOT NULL;
            v_copy := tickq.simulation_best_copy(v_states, v_ufps, v_n, v_count, v_grid, v_len, v_b.shifts,
                v_b.rows_shifts, v_b.zones, v_b.firsts, v_b.lasts, v_b.backs, v_b.sorted, v_b.sorted_backs,
                v_b.sorted_lasts, v_b.firsts_after);
            v_j := v_n - v_copy.steps;
            -- The runs by kind at parts n, j and c, worked out where they were copied (each from the
            -- part it was copied from, those first; n's where the clock stands after a copy).
            FOREACH v_x IN ARRAY CASE WHEN v_copy.c IS NOT NULL THEN ARRAY[v_n, v_j, v_copy.c] ELSE '{}' END LOOP
                v_chain := '{}';
                v_y := v_x;
                WHILE v_ids[v_y] IS NULL AND v_src[v_y] IS NOT NULL LOOP
                    v_chain := v_y || v_chain;
                    v_y := v_src[v_y];
                END LOOP;
                FOREACH v_y IN ARRAY v_chain LOOP
                    v_ids[v_y] := tickq.simulation_remap(v_ids[v_src[v_y]], v_base[v_y], v_offset[v_y], v_ids[v_goes[v_y]]);
                END LOOP;
            END LOOP;
            SELECT r.rows, r.maps INTO v_rows, v_maps FROM tickq.simulation_relabel(v_grid + v_len * (v_j - 2), v_len,
                v_copy.c - v_j, v_firsts[v_j], v_firsts[v_copy.c], v_ids[v_j], v_ids[v_n]) AS r
            WHERE v_copy.c IS NOT NULL AND v_fps[v_j] IS DISTINCT FROM v_fps[v_n];  -- the same but for slot rows
            IF v_copy.c IS NOT NULL AND (v_fps[v_j] = v_fps[v_n] OR v_rows IS NOT NULL) THEN
                PERFORM tickq.simulation_copy(v_grid + v_len * (v_j - 2), v_grid + v_len * (v_copy.c - 2), v_len * v_copy.steps,
                    tickq.simulation_relabel_state(v_states[v_copy.c],
                        v_maps[(v_copy.c - v_j - 1) * v_slots + 1:(v_copy.c - v_j) * v_slots]),
                    v_ids[v_j], v_ids[v_copy.c], v_ids[v_n], v_firsts[v_j], v_firsts[v_copy.c], v_firsts[v_n], v_rows,
                    v_dues[v_copy.c], v_later[v_copy.c], v_trust[v_copy.c]);
                -- The copied parts' states, digests, runs by kind (remapped) and first ids, set in place: a
                -- function taking and returning the arrays copied them whole (2.7 s of the month of 1,000 kinds).
                FOR k IN v_j + 1..v_copy.c LOOP
                    v_states[k + v_copy.steps] := v_states[k];
                    v_fps[k + v_copy.steps] := v_fps[k];
                    IF (k - v_j) * v_slots <= cardinality(v_maps) THEN  -- rows renamed in this part
                        v_states[k + v_copy.steps] := tickq.simulation_relabel_state(v_states[k],
                            v_maps[(k - v_j - 1) * v_slots + 1:(k - v_j) * v_slots]);
                        v_fps[k + v_copy.steps] := md5(v_states[k + v_copy.steps]::text);
                    END IF;
                    v_ufps[k + v_copy.steps] := v_ufps[k];
                    v_ids[k + v_copy.steps] := NULL;  -- worked out when read (v_src)
                    v_src[k + v_copy.steps] := k;
                    v_base[k + v_copy.steps] := v_firsts[v_j];
                    v_offset[k + v_copy.steps] := v_firsts[v_n] - v_firsts[v_j];
                    v_goes[k + v_copy.steps] := v_n;
                    v_firsts[k + v_copy.steps] := v_firsts[k] + v_firsts[v_n] - v_firsts[v_j];
                    -- The due times, the copy's length later: a kind with a slot in the stretch copied
                    -- has the same next slots the copy's length later (tickq.simulation_restore), one with none
                    -- may not, but it is due at part c's start or later: those before stay exact.
                    v_dues[k + v_copy.steps] := v_dues[k];
                    v_later[k + v_copy.steps] := v_later[k] + v_len * v_copy.steps;
                    v_trust[k + v_copy.steps] := least(v_trust[k], v_grid + v_len * (v_copy.c - 2) - v_later[k]);
                END LOOP;
                v_at := v_grid + v_len * (v_copy.c + v_copy.steps - 2);
                COMMIT;
                CONTINUE;
            END IF;
        END IF;
        PERFORM tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, v_calm);
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE tickq.simulate_window(timestamptz, jsonb, boolean, boolean, timestamptz) IS  -- noqa: LT01
'The simulator''s clock through a whole window in one CALL: with p_steady, tickq.simulation_start '
'at p_now first; then tickq.simulation_clock for each part of tickq.simulation_parts(p_until, '
'p_now) (the real claim and report of tickq.simulation_events, or a calm stretch''s runs written '
'without them), committing after each, but where a stretch repeats one of a day or a week before '
'from the same state, whose runs are copied (tickq.simulation_best_copy, tickq.simulation_copy), and '
'where nothing runs or falls due. With p_stop_stale it stops at the first part that starts after a wait '
'of stale_after (tickq.simulation_stale). Must be called outside a transaction block (it commits). '
'Scratch databases only.';
REVOKE ALL ON PROCEDURE tickq.simulate_window(timestamptz, jsonb, boolean, boolean, timestamptz) FROM public;
