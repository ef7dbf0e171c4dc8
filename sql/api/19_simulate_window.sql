-- The simulator's clock through a whole window (tickq.simulate_window): its parts, each committed
-- on its own, and the stretches it copies instead of simulating again: where the state a part
-- starts in (sql/api/19_simulation_state.sql) is that of a day or a week before and the stretch
-- from then repeats for every kind's slots (sql/api/18_repeats.sql). The events of a part are
-- sql/api/07_simulate.sql's.

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

CREATE OR REPLACE FUNCTION tickq.simulation_copy_until(
    p_states jsonb[],
    p_fps text[],
    p_i integer,
    p_j integer,
    p_top integer,
    p_grid timestamptz,
    p_len interval,
    p_shift interval,
    p_shifts interval[],
    p_zones text[],
    p_firsts timestamptz[],
    p_lasts timestamptz[],
    p_backs timestamptz[],
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_from timestamptz := p_grid + p_len * (p_j - 2);
    v_horizon timestamptz;
    v_c integer;
BEGIN
    -- Parts are numbered from the window's first (1, at its start; 2, on the first whole part of
    -- the clock; each p_len later). The clock stands at part p_i, in the state part p_j stood in
    -- (p_shift earlier): the latest part c in (p_j, p_top] whose state is known and such that the
    -- stretch from part p_j to part c repeats p_shift later for every kind; NULL when none. A
    -- kind waiting past its slot at part p_j counts its slots from its due time.
    IF p_j < 2 OR p_top <= p_j OR p_fps[p_j] IS DISTINCT FROM p_fps[p_i] THEN
        RETURN NULL;
    END IF;
    v_horizon := tickq.simulation_repeats_until(
        least(v_from, v_from + make_interval(secs => (
            SELECT min((e.value ->> 1)::double precision) FROM jsonb_array_elements(p_states[p_j] -> 'kinds') AS e (value)))),
        p_grid + p_len * (p_top - 2), p_shift,
        ARRAY(SELECT z FROM unnest(p_shifts, p_zones) AS b (s, z) WHERE b.s = p_shift),
        ARRAY(SELECT f FROM unnest(p_shifts, p_firsts) AS b (s, f) WHERE b.s = p_shift),
        ARRAY(SELECT l FROM unnest(p_shifts, p_lasts) AS b (s, l) WHERE b.s = p_shift),
        ARRAY(SELECT x FROM unnest(p_shifts, p_backs) AS b (s, x) WHERE b.s = p_shift));
    SELECT max(c.n) INTO v_c
    FROM generate_series(p_j + 1, p_top) AS c (n)
    WHERE p_grid + p_len * (c.n - 2) <= v_horizon AND p_states[c.n] IS NOT NULL;
    RETURN v_c;
END
$$;
COMMENT ON FUNCTION tickq.simulation_copy_until(
    jsonb[], text[], integer, integer, integer, timestamptz, interval, interval, interval[], text[], timestamptz[],
    timestamptz[], timestamptz[], timestamptz
) IS
'For tickq.simulate_window: standing at part p_i in the state part p_j stood in (p_shift earlier; '
'p_states and p_fps: the states known by part and their digests), the latest part c in (p_j, '
'p_top] with a known state such that the stretch from part p_j to part c repeats p_shift later '
'(tickq.simulation_repeats_until, p_shifts .. p_backs: tickq.simulation_breaks'' rows of every '
'shift); NULL when none. Parts are numbered from 1, the window''s start; part 2 starts at p_grid, '
'each p_len after the one before. p_now is unused.';

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
    v_len interval;
    v_grid timestamptz;
    v_count integer;
    v_shifts interval[];
    v_b record;
    v_shift interval;
    v_states jsonb[] := '{}';
    v_fps text[] := '{}';
    v_ids jsonb[] := '{}';
    v_firsts bigint[] := '{}';
    v_rest text := md5(jsonb_build_object('kinds', '[]'::jsonb, 'slots', '[]'::jsonb, 'pools', '[]'::jsonb)::text);
    v_at timestamptz;
    v_idle timestamptz;
    v_n integer;
    v_c integer;
    v_steps integer;
    v_best integer;
    v_best_shift interval;
    v_holds jsonb;
BEGIN
    -- One CALL for a whole window: the parts of tickq.simulation_parts, each committed before the
    -- next starts (so the versions of the kind and slot rows it left can be pruned), with no
    -- round trip to the caller between them. At the start of each part but the first (where
    -- irreversible kinds are armed) the state is kept (tickq.simulation_state); where it is the
    -- state of a day or a week before, and the stretch from then repeats, that stretch's runs
    -- are copied instead of simulated (tickq.simulation_copy_until), never into the last part.
    -- A part with no run going on and nothing due before its end costs nothing.
    IF p_steady THEN
        PERFORM tickq.simulation_start(p_now);
    END IF;
    PERFORM tickq.simulation_session();
    PERFORM tickq.simulation_arm(p_now);
    v_holds := tickq.simulation_holds(p_durations);
    SELECT min(p.part_from) FILTER (WHERE p.part_from > p_now), count(*) INTO v_grid, v_count
    FROM tickq.simulation_parts(p_until, p_now) AS p;
    SELECT greatest(s.tick, s.tick * floor(900 / extract(EPOCH FROM s.tick))) INTO STRICT v_len FROM tickq.settings AS s;
    v_shifts := ARRAY(SELECT s.shift FROM unnest(ARRAY[interval '1 day', interval '7 days']) AS s (shift)
        WHERE extract(EPOCH FROM s.shift) % extract(EPOCH FROM v_len) = 0 ORDER BY s.shift);
    SELECT coalesce(array_agg(s.shift), '{}') AS shifts, array_agg(b.zone) AS zones, array_agg(b.first_at) AS firsts,
        array_agg(b.last_at) AS lasts, array_agg(b.back_to) AS backs
    INTO v_b
    FROM unnest(v_shifts) AS s (shift)
    CROSS JOIN LATERAL tickq.simulation_breaks(p_now, p_until, s.shift) AS b;
    FOR v_part IN SELECT p.part_from, p.part_until, row_number() OVER (ORDER BY p.part_from)::integer AS n
        FROM tickq.simulation_parts(p_until, p_now) AS p
    LOOP
        CONTINUE WHEN v_part.part_from < v_at;
        v_n := v_part.n;
        IF v_n > 1 AND v_part.part_until < v_idle THEN  -- nothing happens: at rest if it was
            v_fps[v_n] := CASE WHEN v_fps[v_n - 1] = v_rest THEN v_rest END;
            v_states[v_n] := CASE WHEN v_fps[v_n] = v_rest THEN v_states[v_n - 1] END;
            v_ids[v_n] := v_ids[v_n - 1];
            v_firsts[v_n] := v_firsts[v_n - 1];
            CONTINUE;
        ELSIF v_n > 1 THEN
            v_idle := NULL;
            v_states[v_n] := tickq.simulation_state(v_part.part_from);
            IF v_fps[v_n] IS NOT NULL AND v_fps[v_n] <> md5(v_states[v_n]::text) THEN
                RAISE EXCEPTION 'simulate_window: the state at % is not the one copied there', v_part.part_from
                    USING ERRCODE = 'internal_error';
            END IF;
            v_fps[v_n] := md5(v_states[v_n]::text);
            v_ids[v_n] := tickq.simulation_running();
            v_firsts[v_n] := coalesce((SELECT max(r.id) FROM tickq.job_run AS r), 0) + 1;
            v_states[v_n - 8 * 86400 / extract(EPOCH FROM v_len)::integer] := NULL;
            IF NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL) THEN
                v_idle := coalesce(tickq.simulation_next_due(), 'infinity');
                v_idle := CASE WHEN v_idle > v_part.part_until THEN v_idle END;
                CONTINUE WHEN v_idle IS NOT NULL;
            END IF;
            v_best := NULL;  -- of the shifts, the one whose copy reaches furthest
            FOREACH v_shift IN ARRAY v_shifts LOOP
                v_steps := (extract(EPOCH FROM v_shift) / extract(EPOCH FROM v_len))::integer;
                v_c := tickq.simulation_copy_until(v_states, v_fps, v_n, v_n - v_steps, least(v_n, v_count - v_steps),
                    v_grid, v_len, v_shift, v_b.shifts, v_b.zones, v_b.firsts, v_b.lasts, v_b.backs);
                IF v_c + v_steps > coalesce(v_best, v_n) THEN
                    v_best := v_c + v_steps;
                    v_best_shift := v_shift;
                END IF;
            END LOOP;
            IF v_best IS NOT NULL THEN
                v_shift := v_best_shift;
                v_steps := (extract(EPOCH FROM v_shift) / extract(EPOCH FROM v_len))::integer;
                v_c := v_best - v_steps;
                PERFORM tickq.simulation_copy(v_grid + v_len * (v_n - v_steps - 2), v_grid + v_len * (v_c - 2), v_shift,
                    v_states[v_c], v_ids[v_n - v_steps], v_ids[v_c], v_ids[v_n], v_firsts[v_n - v_steps],
                    v_firsts[v_c], v_firsts[v_n]);
                FOR k IN v_n - v_steps + 1..v_c LOOP  -- what the copy knows of its parts
                    v_fps[k + v_steps] := v_fps[k];
                    v_states[k + v_steps] := v_states[k];
                    v_ids[k + v_steps] := tickq.simulation_remap(v_ids[k], v_firsts[v_n - v_steps],
                        v_firsts[v_n] - v_firsts[v_n - v_steps], v_ids[v_n]);
                    v_firsts[k + v_steps] := v_firsts[k] + v_firsts[v_n] - v_firsts[v_n - v_steps];
                END LOOP;
                v_at := v_grid + v_len * (v_c + v_steps - 2);
                COMMIT;
                CONTINUE;
            END IF;
        END IF;
        PERFORM tickq.simulation_events(v_part.part_until, v_holds, v_part.part_from);
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE tickq.simulate_window(timestamptz, jsonb, boolean, timestamptz) IS  -- noqa: LT01
'The simulator''s clock through a whole window in one CALL: with p_steady, tickq.simulation_start '
'at p_now first; then tickq.simulate_events for each part of tickq.simulation_parts(p_until, '
'p_now), committing after each, but where a stretch repeats one of a day or a week before from the '
'same state, whose runs are copied (tickq.simulation_copy_until, tickq.simulation_copy), and where '
'nothing runs or falls due. Must be called outside a transaction block (it commits). Scratch '
'databases only.';
REVOKE ALL ON PROCEDURE tickq.simulate_window(timestamptz, jsonb, boolean, timestamptz) FROM public;
