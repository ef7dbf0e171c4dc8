-- Which stretch tickq.simulate_window copies where it stands (sql/api/19_simulate_window.sql): of
-- the shifts the day rules' breaks allow (tickq.simulation_window_breaks), the one whose stretch
-- from the same state repeats furthest for every kind's slots (sql/api/18_repeats.sql).

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
    p_sorted boolean DEFAULT false,
    p_sbacks timestamptz[] DEFAULT NULL,
    p_slasts timestamptz[] DEFAULT NULL,
    p_after timestamptz[] DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_from timestamptz := p_grid + p_len * (p_j - 2);
    v_until timestamptz := p_grid + p_len * (p_top - 2);
    v_horizon timestamptz;
    v_c integer;
    v_rows integer[] := array_positions(p_shifts, p_shift);  -- this shift's breaks: together, in order
    v_lo integer := v_rows[1];
    v_hi integer := v_rows[cardinality(v_rows)];
BEGIN
    -- Parts are numbered from the window's first (1, at its start; 2, on the first whole part of
    -- the clock; each p_len later). The clock stands at part p_i, in the state part p_j stood in
    -- (p_shift earlier): the latest part c in (p_j, p_top] whose state is known and such that the
    -- stretch from part p_j to part c repeats p_shift later for every kind; NULL when none. A
    -- kind waiting past its slot at part p_j counts its slots from its due time. With p_sorted,
    -- the breaks are searched in p_sbacks, p_slasts and p_after (tickq.simulation_breaks_until)
    -- where the stretch starts within a month of the window.
    IF p_j < 2 OR p_top <= p_j OR p_fps[p_j] IS DISTINCT FROM p_fps[p_i] THEN
        RETURN NULL;
    END IF;
    v_from := least(v_from, v_from + make_interval(secs => (
        SELECT min((e.value ->> 1)::double precision) FROM jsonb_array_elements(p_states[p_j] -> 'kinds') AS e (value))));
    IF p_sorted AND v_from >= p_grid - interval '30 days' THEN  -- the breaks searched, not read whole
        v_horizon := tickq.simulation_repeats_until(v_from,
            least(v_until, tickq.simulation_breaks_until(v_from, v_lo, v_hi, p_sbacks, p_slasts, p_after)), p_shift,
            '{}', '{}', '{}', '{}');
    ELSE
        v_horizon := tickq.simulation_repeats_until(v_from, v_until, p_shift, coalesce(p_zones[v_lo:v_hi], '{}'),
            coalesce(p_firsts[v_lo:v_hi], '{}'), coalesce(p_lasts[v_lo:v_hi], '{}'), coalesce(p_backs[v_lo:v_hi], '{}'));
    END IF;
    SELECT max(c.n) INTO v_c
    FROM generate_series(p_j + 1, p_top) AS c (n)
    WHERE p_grid + p_len * (c.n - 2) <= v_horizon AND p_states[c.n] IS NOT NULL;
    RETURN v_c;
END
$$;
COMMENT ON FUNCTION tickq.simulation_copy_until(
    jsonb[], text[], integer, integer, integer, timestamptz, interval, interval, interval[], text[], timestamptz[],
    timestamptz[], timestamptz[], boolean, timestamptz[], timestamptz[], timestamptz[], timestamptz
) IS
'For tickq.simulate_window: standing at part p_i in the state part p_j stood in (p_shift earlier; '
'p_states and p_fps: the states known by part and their digests), the latest part c in (p_j, '
'p_top] with a known state such that the stretch from part p_j to part c repeats p_shift later '
'(tickq.simulation_repeats_until, p_shifts .. p_backs: tickq.simulation_breaks'' rows of every '
'shift, each shift''s rows together; with p_sorted, p_sbacks .. p_after: their sorted forms, '
'tickq.simulation_breaks_until); NULL when none. Parts are numbered from 1, the window''s start; '
'part 2 starts at p_grid, each p_len after the one before.';

CREATE OR REPLACE FUNCTION tickq.simulation_best_copy(
    OUT c integer,
    OUT steps integer,
    p_states jsonb[],
    p_digests text[],
    p_n integer,
    p_count integer,
    p_grid timestamptz,
    p_len interval,
    p_shifts interval[],
    p_rows_shifts interval[],
    p_zones text[],
    p_firsts timestamptz[],
    p_lasts timestamptz[],
    p_backs timestamptz[],
    p_sorted boolean DEFAULT false,
    p_sbacks timestamptz[] DEFAULT NULL,
    p_slasts timestamptz[] DEFAULT NULL,
    p_after timestamptz[] DEFAULT NULL,
    p_now timestamptz DEFAULT now()
)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_shift interval;
    v_steps integer;
    v_c integer;
BEGIN
    -- Of the shifts (a day, a week), the copy to part n that reaches furthest: its last part c
    -- of the stretch copied and the shift in parts; NULLs when none (tickq.simulation_copy_until,
    -- never into the last part, p_count).
    FOREACH v_shift IN ARRAY p_shifts LOOP
        v_steps := (extract(EPOCH FROM v_shift) / extract(EPOCH FROM p_len))::integer;
        v_c := tickq.simulation_copy_until(p_states, p_digests, p_n, p_n - v_steps, least(p_n, p_count - v_steps),
            p_grid, p_len, v_shift, p_rows_shifts, p_zones, p_firsts, p_lasts, p_backs, p_sorted, p_sbacks, p_slasts,
            p_after);
        IF v_c + v_steps > coalesce(c + steps, p_n) THEN
            c := v_c;
            steps := v_steps;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.simulation_best_copy(
    jsonb[], text[], integer, integer, timestamptz, interval, interval[], interval[], text[], timestamptz[],
    timestamptz[], timestamptz[], boolean, timestamptz[], timestamptz[], timestamptz[], timestamptz
) IS
'For tickq.simulate_window standing at part p_n: of the shifts p_shifts, the copy that reaches '
'furthest (tickq.simulation_copy_until): the last part c of the stretch it copies and the shift in '
'parts (steps); NULLs when none. p_count parts in all; p_rows_shifts .. p_after the day rules'' '
'breaks (tickq.simulation_window_breaks).';
