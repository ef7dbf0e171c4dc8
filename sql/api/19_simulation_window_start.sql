-- Where tickq.simulate_window (19_simulate_window.sql) starts a window: the queue set up for the
-- simulator and what the window's parts need to know, the breaks of the kinds' day rules among
-- it.

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

CREATE OR REPLACE FUNCTION tickq.simulation_window_breaks(
    OUT shifts interval[],
    OUT rows_shifts interval[],
    OUT zones text[],
    OUT firsts timestamptz[],
    OUT lasts timestamptz[],
    OUT backs timestamptz[],
    OUT sorted boolean,
    OUT sorted_backs timestamptz[],
    OUT sorted_lasts timestamptz[],
    OUT firsts_after timestamptz[],
    p_until timestamptz,
    p_len interval,
    p_now timestamptz DEFAULT now()
)
LANGUAGE sql STABLE
AS $$
    -- The shifts a copy may use (a day and a week, each a whole number of parts p_len long, and
    -- shorter than the window: a month end's three days copy no week), and for all of them the
    -- breaks of the kinds' day rules over the window (tickq.simulation_breaks), as arrays for
    -- tickq.simulation_copy_until. Sorted, each shift's breaks again for
    -- tickq.simulation_breaks_until (a thousand cron kinds have thousands of breaks, which every
    -- stretch read whole): true when every calendar's zone keeps its offset from a month before
    -- the window to a month after it and each break's day comes after the slot before it.
    WITH s AS (
        SELECT s.shift FROM unnest(ARRAY[interval '1 day', interval '7 days']) AS s (shift)
        WHERE extract(EPOCH FROM s.shift) % extract(EPOCH FROM p_len) = 0 AND s.shift < p_until - p_now
    ),
    b AS (
        SELECT s.shift, b.*, coalesce(CASE WHEN b.last_at IS NOT NULL THEN b.back_to END, '-infinity') AS sback,
            coalesce(b.last_at, '-infinity') AS slast
        FROM s
        CROSS JOIN LATERAL tickq.simulation_breaks(p_now, p_until, s.shift)
            WITH ORDINALITY AS b (kind, zone, first_at, last_at, back_to, o)
    ),
    w AS (
        -- The least first_at from each break on (by last_at, then order), as a running minimum
        -- from the last: a frame from the current row to the end is aggregated again for every
        -- row (0.15 s of a month of 1,000 cron kinds' thousands of breaks).
        SELECT b.*, min(b.first_at) OVER (PARTITION BY b.shift ORDER BY b.slast DESC, b.o DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS after
        FROM b
    )
    -- Each shift's rows together, so a copy takes its own as a slice (or its bounds).
    SELECT ARRAY(SELECT s.shift FROM s ORDER BY s.shift), coalesce(array_agg(w.shift ORDER BY w.shift, w.o), '{}'),
        array_agg(w.zone ORDER BY w.shift, w.o), array_agg(w.first_at ORDER BY w.shift, w.o),
        array_agg(w.last_at ORDER BY w.shift, w.o), array_agg(w.back_to ORDER BY w.shift, w.o),
        coalesce(bool_and(w.back_to IS NULL OR w.last_at IS NULL OR w.back_to < w.first_at), true) AND (
            SELECT coalesce(bool_and(tickq.zone_steady(z.zone, p_now - interval '31 days', p_until + interval '31 days')), true)
            FROM (SELECT DISTINCT k.timezone AS zone FROM tickq.job_kind AS k WHERE k.enabled AND k.every IS NULL) AS z),
        array_agg(w.sback ORDER BY w.shift, w.sback), array_agg(w.slast ORDER BY w.shift, w.slast, w.o),
        array_agg(w.after ORDER BY w.shift, w.slast, w.o)
    FROM w
$$;
COMMENT ON FUNCTION tickq.simulation_window_breaks(timestamptz, interval, timestamptz) IS
'For tickq.simulate_window: the shifts a copy may use in a window from p_now to p_until in parts '
'p_len long (a day, a week: whole numbers of parts, shorter than the window), and the breaks of '
'the kinds'' day rules for each (tickq.simulation_breaks), as arrays, one entry per break, each '
'shift''s together; sorted (when every calendar''s zone keeps its offset from a month before to a '
'month after the window), each shift''s breaks again as tickq.simulation_breaks_until reads them: '
'back_to sorted, last_at sorted and the least first_at from each on (-infinity for none).';
