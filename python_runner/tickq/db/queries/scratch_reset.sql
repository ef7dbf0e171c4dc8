-- A used scratch database put back to what the template held (scratch_seed.sql). The tables a
-- check wrote (rows where the template had none, or rows other than the template's) are emptied
-- in one TRUNCATE (new, empty files: no bloat carried from the last check), with every table
-- that references one of them (TRUNCATE asks for it); the template's rows are written again
-- where a table was emptied, and every sequence is put where it stood. Each table TRUNCATEd
-- costs about 2 ms (its files made anew) and a check of the story's registry writes 5 of the 19,
-- so only those (and the 4 that reference them) are: a check of the demo's registry in a loop of
-- checks took 270 ms against 307 ms when all 19 were (bench/README.md). queue_registry goes
-- last: a write of the slot rows forgets its digest (tickq.forget_registry_digest).
-- Tables are matched to their seeds by oid: a name as text depends on the session's search_path.
-- tests_py/test_scratch_pool.py compares every table and sequence with a fresh copy.
DO $$
DECLARE
    v_seed record;
    v_wrote boolean;
    v_dirty regclass[] := '{}'::regclass[];
    v_more regclass[];
    v_columns text;
BEGIN
    FOR v_seed IN
        SELECT c.oid::regclass AS relation, s.content
        FROM pg_class AS c LEFT JOIN tickq.scratch_seed AS s ON s.relation::regclass = c.oid
        WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'r' AND c.relname <> 'scratch_seed'
    LOOP
        IF v_seed.content IS NULL THEN
            EXECUTE format('SELECT EXISTS (SELECT FROM %s)', v_seed.relation) INTO v_wrote;
        ELSE
            EXECUTE format('SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text), ''[]'') FROM %s AS t',
                v_seed.relation) INTO v_seed.content;
            SELECT v_seed.content IS DISTINCT FROM jsonb_agg(r.row ORDER BY r.row::text) INTO v_wrote
            FROM tickq.scratch_seed AS s CROSS JOIN LATERAL jsonb_array_elements(s.content) AS r (row)
            WHERE s.relation::regclass = v_seed.relation;
        END IF;
        IF v_wrote THEN
            v_dirty := v_dirty || v_seed.relation;
        END IF;
    END LOOP;
    LOOP  -- and every table that references them, as TRUNCATE requires
        v_more := ARRAY(
            SELECT DISTINCT f.conrelid::regclass FROM pg_constraint AS f
            WHERE f.contype = 'f' AND f.confrelid = ANY(v_dirty) AND NOT f.conrelid = ANY(v_dirty));
        EXIT WHEN cardinality(v_more) = 0;
        v_dirty := v_dirty || v_more;
    END LOOP;
    IF cardinality(v_dirty) > 0 THEN
        EXECUTE (SELECT 'TRUNCATE ' || string_agg(d.relation::text, ', ') FROM unnest(v_dirty) AS d (relation));
    END IF;
    FOR v_seed IN
        SELECT s.relation::regclass AS relation, c.relkind, s.content
        FROM tickq.scratch_seed AS s INNER JOIN pg_class AS c ON c.oid = s.relation::regclass
        ORDER BY s.relation = 'tickq.queue_registry', s.relation
    LOOP
        IF v_seed.relkind = 'S' THEN
            PERFORM setval(v_seed.relation, (v_seed.content ->> 'last_value')::bigint,
                (v_seed.content ->> 'is_called')::boolean);
            CONTINUE;
        END IF;
        CONTINUE WHEN NOT v_seed.relation = ANY(v_dirty);
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_columns
        FROM pg_attribute AS a
        WHERE a.attrelid = v_seed.relation AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM jsonb_populate_recordset(NULL::%s, $1)',
            v_seed.relation, v_columns, v_columns, v_seed.relation) USING v_seed.content;
    END LOOP;
END
$$
