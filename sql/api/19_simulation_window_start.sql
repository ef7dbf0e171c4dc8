-- Where tickq.simulate_window (19_simulate_window.sql) starts a window: the queue set up for the
-- simulator and what the window's parts need to know.

CREATE OR REPLACE FUNCTION tickq.simulation_window_start(
    OUT holds jsonb,
    OUT calm boolean,
    OUT grid timestamptz,
    OUT parts integer,
    OUT part interval,
    OUT slots integer,
    p_until timestamptz,
    p_durations jsonb,
    p_steady boolean,
    p_now timestamptz DEFAULT now()
)
LANGUAGE plpgsql
AS $$
BEGIN
    -- With p_steady, every kind at its next slot first; the session the simulator's; unarmed
    -- irreversible kinds armed. How long each run holds its slot, whether calm stretches may be
    -- written without the loop (18_simulation_calm.sql), the start of the window's second
    -- part, its number of parts, their length, and the slot limit.
    IF p_steady THEN
        PERFORM tickq.simulation_start(p_now);
    END IF;
    PERFORM tickq.simulation_session();
    PERFORM tickq.simulation_arm(p_now);
    holds := tickq.simulation_holds(p_durations);
    calm := tickq.simulation_calm_allowed(holds);
    SELECT min(p.part_from) FILTER (WHERE p.part_from > p_now), count(*) INTO grid, parts
    FROM tickq.simulation_parts(p_until, p_now) AS p;
    SELECT greatest(s.tick, s.tick * floor(900 / extract(EPOCH FROM s.tick))), s.slots INTO STRICT part, slots
    FROM tickq.settings AS s;
END
$$;
COMMENT ON FUNCTION tickq.simulation_window_start(timestamptz, jsonb, boolean, timestamptz) IS
'For tickq.simulate_window, at p_now: with p_steady every kind at its next slot '
'(tickq.simulation_start), the session the simulator''s, unarmed irreversible kinds armed; returns '
'each kind''s hold (tickq.simulation_holds), whether calm stretches may be written '
'(tickq.simulation_calm_allowed), the start of the second part and the number of parts through '
'p_until (tickq.simulation_parts), the parts'' length, and the slot limit. Scratch databases only.';
