-- Copies whose state differs from the one a day or a week before only in which slot rows the
-- runs going on hold (for tickq.simulate_window, 19_simulate_window.sql).
--
-- Where one more run (a monthly line's, a weekly line's) takes a slot row while every row is
-- busy, the runs after it take other rows than they did a day before, and they go on doing so
-- for hours: the two states are then the same but for the rows' numbers, and the same runs
-- come at the same instants (a claim counts free rows; which rows only names them). Such a
-- stretch is copied as any other, each run's slot row worked out again: a claim takes the
-- lowest free rows, in the order of the rows its runs took in the stretch copied, and a run
-- frees its row when it ends, before the claims of that instant. Once every run going on holds
-- the row it held in the stretch copied, the rest of the stretch is the same, rows too.

CREATE OR REPLACE FUNCTION tickq.simulation_unlabelled(
    p_state jsonb
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    -- The state without the slot rows' numbers: each run's row left out, the rows held listed
    -- by the kind holding them.
    SELECT jsonb_build_object(
        'kinds', coalesce((
            SELECT jsonb_agg(CASE WHEN jsonb_typeof(e.value -> 5) = 'array' THEN jsonb_set(e.value, '{5,6}', 'null')
                ELSE e.value END ORDER BY e.o)
            FROM jsonb_array_elements(p_state -> 'kinds') WITH ORDINALITY AS e (value, o)), '[]'),
        'slots', coalesce((
            SELECT jsonb_agg(e.value - 0 ORDER BY e.value ->> 1, e.value -> 2)
            FROM jsonb_array_elements(p_state -> 'slots') AS e (value)), '[]'),
        'pools', p_state -> 'pools')
$$;
COMMENT ON FUNCTION tickq.simulation_unlabelled(jsonb) IS
'For the simulator''s copies: a state of tickq.simulation_state without the numbers of the slot rows '
'held (the same for two states that differ only in which rows the runs going on hold).';

CREATE OR REPLACE FUNCTION tickq.simulation_relabel_state(
    p_state jsonb,
    p_map integer[]
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    -- Row r held in p_state is row p_map[r] (as it is: p_map empty, or no entry for r).
    SELECT CASE WHEN p_state IS NULL OR coalesce(cardinality(p_map), 0) = 0 THEN p_state ELSE jsonb_build_object(
        'kinds', coalesce((
            SELECT jsonb_agg(CASE WHEN jsonb_typeof(e.value -> 5 -> 6) = 'number' THEN jsonb_set(e.value, '{5,6}',
                to_jsonb(coalesce(p_map[(e.value -> 5 ->> 6)::integer], (e.value -> 5 ->> 6)::integer)))
                ELSE e.value END ORDER BY e.o)
            FROM jsonb_array_elements(p_state -> 'kinds') WITH ORDINALITY AS e (value, o)), '[]'),
        'slots', coalesce((
            SELECT jsonb_agg(jsonb_set(e.value, '{0}', to_jsonb(m.n)) ORDER BY m.n)
            FROM jsonb_array_elements(p_state -> 'slots') AS e (value)
            CROSS JOIN LATERAL (SELECT coalesce(p_map[(e.value ->> 0)::integer], (e.value ->> 0)::integer) AS n) AS m),
            '[]'),
        'pools', p_state -> 'pools') END
$$;
COMMENT ON FUNCTION tickq.simulation_relabel_state(jsonb, integer[]) IS
'For the simulator''s copies: the state p_state (tickq.simulation_state) with each slot row r held '
'named p_map[r] instead (r itself where p_map has no entry; p_state as it is when p_map is empty).';

CREATE OR REPLACE FUNCTION tickq.simulation_relabel_ready(
    p_was jsonb,
    p_going jsonb
) RETURNS integer
LANGUAGE sql STABLE
AS $$
    -- The slot limit, when rows can be worked out again: every kind of weight 1 and without
    -- pools, one row per slot and none past the limit, the rows held now those of the runs going
    -- on (p_going, as p_was then), and those of p_was each in a row, ending as claims end them
    -- (no lease lost). NULL otherwise.
    SELECT s.slots FROM tickq.settings AS s
    WHERE NOT EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.weight > 1 OR k.pools <> '{}')
        AND (SELECT count(*) FILTER (WHERE sl.n BETWEEN 1 AND s.slots) = s.slots AND count(*) = s.slots FROM tickq.slot AS sl)
        AND NOT EXISTS (SELECT FROM tickq.slot AS sl WHERE sl.run_id IS NULL AND sl.leased_until IS NOT NULL)
        AND (SELECT count(*) FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL)
            = (SELECT count(*) FROM jsonb_object_keys(p_going))
        AND (SELECT count(*) FROM jsonb_object_keys(p_was)) = (SELECT count(*) FROM jsonb_object_keys(p_going))
        AND NOT EXISTS (
            SELECT FROM jsonb_each_text(p_was) AS w (kind, id)
            LEFT JOIN tickq.job_run AS o ON o.id = w.id::bigint
            WHERE o.slot_row IS NULL OR o.outcome NOT IN ('ok', 'running') OR o.finished_at <= o.claimed_at)
        AND NOT EXISTS (
            SELECT FROM jsonb_each_text(p_going) AS g (kind, id)
            LEFT JOIN tickq.job_run AS r ON r.id = g.id::bigint
            LEFT JOIN tickq.slot AS sl ON sl.n = r.slot_row AND sl.run_id = r.id
            WHERE sl.n IS NULL OR NOT p_was ? g.kind)
$$;
COMMENT ON FUNCTION tickq.simulation_relabel_ready(jsonb, jsonb) IS
'For tickq.simulation_relabel: the slot limit when the slot rows of a copy can be worked out again '
'(kinds of weight 1 without pools, one row per slot, the rows held now those of the runs going on '
'p_going, by kind, which went on p_shift earlier as p_was); NULL otherwise.';

CREATE OR REPLACE FUNCTION tickq.simulation_relabel_chunk(
    OUT ids bigint[],
    OUT ats timestamptz[],
    OUT rows integer[],
    OUT ends timestamptz[],
    OUT end_rows integer[],
    OUT next_id bigint,
    p_lo bigint,
    p_end bigint,
    p_from timestamptz,
    p_until timestamptz,
    p_slots integer,
    p_after timestamptz
)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_size integer := 1000;
    v_last timestamptz;
    v_bad boolean;
BEGIN
    -- The runs from id p_lo on, about a thousand (ids p_lo until p_end are those claimed from
    -- p_from until p_until, numbered by claim instant, at most p_slots an instant), to the end of
    -- an instant: their ids, claim instants and rows in claim order (instant, then row), their
    -- ends before p_until with their rows in end order, and the next id to read (p_end: none).
    -- NULL ids when a run is not one a claim opened in the stretch, in a row, ending after it, or
    -- was claimed by p_after (the last instant read before).
    SELECT r.claimed_at INTO v_last FROM tickq.job_run AS r WHERE r.id = least(p_end, p_lo + v_size) - 1;
    SELECT array_agg(r.id ORDER BY r.claimed_at, r.slot_row), array_agg(r.claimed_at ORDER BY r.claimed_at, r.slot_row),
        array_agg(r.slot_row ORDER BY r.claimed_at, r.slot_row),
        coalesce(array_agg(r.finished_at ORDER BY r.finished_at) FILTER (WHERE r.finished_at < p_until), '{}'),
        coalesce(array_agg(r.slot_row ORDER BY r.finished_at) FILTER (WHERE r.finished_at < p_until), '{}'),
        coalesce(max(r.id) + 1, p_lo),
        coalesce(bool_or(r.slot_row IS NULL OR r.outcome NOT IN ('ok', 'running') OR r.claimed_at < p_from
            OR r.claimed_at >= p_until OR r.finished_at <= r.claimed_at OR r.claimed_at <= p_after), false)
    INTO ids, ats, rows, ends, end_rows, next_id, v_bad
    FROM (SELECT r.* FROM tickq.job_run AS r
        WHERE r.id >= p_lo AND r.id < least(p_end, p_lo + v_size + p_slots)
            AND (r.id < p_lo + v_size OR r.claimed_at = v_last) OFFSET 0) AS r;
    ids := CASE WHEN NOT v_bad THEN coalesce(ids, '{}') END;
END
$$;
COMMENT ON FUNCTION tickq.simulation_relabel_chunk(bigint, bigint, timestamptz, timestamptz, integer, timestamptz) IS
'For tickq.simulation_relabel: the next thousand or so runs of a stretch copied, from id p_lo to the '
'end of an instant (ids, claim instants and slot rows in claim order; ends before p_until and their '
'rows in end order; the next id to read); NULL ids when one is not a run a claim opened there '
'after p_after.';

CREATE OR REPLACE FUNCTION tickq.simulation_relabel_start(
    OUT map integer[],
    OUT free_then varbit,
    OUT free_now varbit,
    OUT ends timestamptz[],
    OUT end_rows integer[],
    OUT diff integer,
    p_was jsonb,
    p_going jsonb,
    p_until timestamptz,
    p_slots integer
)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_then integer[];
    v_now integer[];
BEGIN
    -- Where a copy starts: the runs going on (p_was then, p_going at present, by kind) map the
    -- rows held then to those held at present; the free rows then and at present (bit r - 1 set:
    -- row r free); the ends of p_was's runs before p_until in time order, and their rows; how
    -- many rows held differ.
    SELECT coalesce(array_agg(o.finished_at ORDER BY o.finished_at) FILTER (WHERE o.finished_at < p_until), '{}'),
        coalesce(array_agg(o.slot_row ORDER BY o.finished_at) FILTER (WHERE o.finished_at < p_until), '{}'),
        coalesce(array_agg(o.slot_row), '{}'), coalesce(array_agg(n.slot_row), '{}')
    INTO ends, end_rows, v_then, v_now
    FROM jsonb_each_text(p_was) AS w (kind, id)
    INNER JOIN tickq.job_run AS o ON o.id = w.id::bigint
    INNER JOIN tickq.job_run AS n ON n.id = (p_going ->> w.kind)::bigint;
    map := array_fill(NULL::integer, ARRAY[p_slots]);
    FOR i IN 1..cardinality(v_then) LOOP
        map[v_then[i]] := v_now[i];
    END LOOP;
    free_then := (SELECT string_agg(CASE WHEN g = ANY(v_then) THEN '0' ELSE '1' END, '' ORDER BY g)
        FROM generate_series(1, p_slots) AS g)::varbit;
    free_now := (SELECT string_agg(CASE WHEN g = ANY(v_now) THEN '0' ELSE '1' END, '' ORDER BY g)
        FROM generate_series(1, p_slots) AS g)::varbit;
    diff := (SELECT count(*) FROM generate_series(1, p_slots) AS g WHERE map[g] <> g);
END
$$;
COMMENT ON FUNCTION tickq.simulation_relabel_start(jsonb, jsonb, timestamptz, integer) IS
'For tickq.simulation_relabel: at the start of a copy, the map of the slot rows held then to those held '
'now (p_was then and p_going now, the runs going on by kind), the free rows then and now, and the ends '
'of p_was''s runs before p_until with their rows, in time order, and how many rows held differ (diff).';

CREATE OR REPLACE FUNCTION tickq.simulation_relabel(
    OUT rows integer[],
    OUT maps integer[],
    p_from timestamptz,
    p_len interval,
    p_parts integer,
    p_first bigint,
    p_end bigint,
    p_was jsonb,
    p_going jsonb
)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_slots integer := tickq.simulation_relabel_ready(p_was, p_going);
    v_until timestamptz := p_from + p_len * p_parts;
    v_map integer[];  -- the row held then (by number) -> the row held now
    v_then varbit;  -- free rows then (bit r - 1 set: row r free); and now
    v_now varbit;
    v_diff integer;  -- rows held whose numbers differ
    f_at timestamptz[];  -- ends to come, in time order, and their rows then
    f_row integer[];
    c_id bigint[] := '{}'::bigint[];  -- the runs read (tickq.simulation_relabel_chunk), in claim order
    c_at timestamptz[];
    c_row integer[];
    c_next bigint := p_first;
    v_ends timestamptz[];
    v_end_rows integer[];
    v_i integer := 1;
    v_f integer := 1;
    v_b integer := 1;
    v_t timestamptz;
    v_bound boolean;
    v_to integer;
BEGIN
    -- The stretch from p_from, p_parts parts p_len long (runs p_first until p_end; p_was going
    -- on at its start), copied to where the clock stands (p_going going on, by kind): rows, the
    -- slot row of each run of the copy (by id less p_first, plus one) while the rows differ from
    -- those then; maps, for each part's start from the second on while they differ, the map of
    -- rows then to rows at present, the slot limit's number of entries. NULLs when rows cannot be
    -- worked out again (tickq.simulation_relabel_ready) or the stretch's own rows were not
    -- taken as the claims take them.
    IF v_slots IS NULL THEN
        RETURN;
    END IF;
    SELECT * INTO v_map, v_then, v_now, f_at, f_row, v_diff FROM tickq.simulation_relabel_start(p_was, p_going, v_until, v_slots);
    maps := '{}'::integer[];
    LOOP
        IF c_id IS NULL OR bit_count(v_then) <> bit_count(v_now) THEN
            rows := NULL;
            maps := NULL;
            RETURN;
        ELSIF v_i > cardinality(c_id) AND c_next < p_end THEN  -- the next runs, their ends among those to come
            SELECT * INTO c_id, c_at, c_row, v_ends, v_end_rows, c_next
            FROM tickq.simulation_relabel_chunk(c_next, p_end, p_from, v_until, v_slots, c_at[cardinality(c_at)]);
            SELECT array_agg(e.at ORDER BY e.at), array_agg(e.n ORDER BY e.at) INTO f_at, f_row
            FROM (SELECT * FROM unnest(f_at[v_f:], f_row[v_f:]) UNION ALL SELECT * FROM unnest(v_ends, v_end_rows)) AS e (at, n);
            v_i := 1;
            v_f := 1;
            CONTINUE;
        END IF;
        -- The next stop: a part's start (its map) or the next claim instant, whichever comes
        -- first; the runs ended before it (by the claim instant itself) free their rows.
        v_t := CASE WHEN v_i <= cardinality(c_id) THEN c_at[v_i] ELSE 'infinity' END;
        v_bound := v_b <= p_parts AND p_from + p_len * v_b <= v_t;
        EXIT WHEN NOT v_bound AND v_i > cardinality(c_id);
        v_t := CASE WHEN v_bound THEN p_from + p_len * v_b ELSE v_t END;
        WHILE v_f <= coalesce(cardinality(f_at), 0) AND (f_at[v_f] < v_t OR f_at[v_f] = v_t AND NOT v_bound) LOOP
            v_diff := v_diff - (v_map[f_row[v_f]] <> f_row[v_f])::integer;
            v_then := set_bit(v_then, f_row[v_f] - 1, 1);
            v_now := set_bit(v_now, v_map[f_row[v_f]] - 1, 1);
            v_map[f_row[v_f]] := NULL;
            v_f := v_f + 1;
        END LOOP;
        EXIT WHEN v_diff = 0;  -- every run going on holds the row it held then: the rest is the same
        IF v_bound THEN
            maps := maps || v_map;
            v_b := v_b + 1;
            CONTINUE;
        END IF;
        -- The claims of the instant: the lowest free rows, in the order of the rows they took then.
        WHILE v_i <= cardinality(c_id) AND c_at[v_i] = v_t AND c_row[v_i] = position(B'1' IN v_then) LOOP
            v_to := position(B'1' IN v_now);
            EXIT WHEN v_to = 0;
            v_map[c_row[v_i]] := v_to;
            rows[c_id[v_i] - p_first + 1] := v_to;
            v_diff := v_diff + (v_to <> c_row[v_i])::integer;
            v_then := set_bit(v_then, c_row[v_i] - 1, 0);
            v_now := set_bit(v_now, v_to - 1, 0);
            v_i := v_i + 1;
        END LOOP;
        c_id := CASE WHEN v_i > cardinality(c_id) OR c_at[v_i] <> v_t THEN c_id END;  -- else not as a claim takes them
    END LOOP;
    rows := coalesce(rows, '{}');
END
$$;
COMMENT ON FUNCTION tickq.simulation_relabel(timestamptz, interval, integer, bigint, bigint, jsonb, jsonb) IS
'For tickq.simulate_window copying a stretch whose state differs from the one it copies only in the '
'slot rows'' numbers: from p_from, p_parts parts p_len long (runs p_first until p_end; p_was going on '
'then, p_going now, by kind), the slot row of each copied run (rows, by id less p_first, plus one) '
'and for each part''s start from the second on the map of rows then to rows now (maps, the slot limit''s '
'number of entries each), as long as they differ; NULLs when they cannot be worked out again.';
