-- For the scratch template only (tickq.db.scratch), after scratch_unlogged.sql: what a scratch
-- database holds before a check writes to it, so that the next check can put a used one back
-- (scratch_reset.sql) instead of copying the template again and dropping the copy. A row per
-- tickq table that holds rows here (all of them, as JSON) and per sequence (where it stands).
-- Autovacuum is off for these tables: a scratch database is emptied by TRUNCATE before each use,
-- so there is nothing to vacuum, and an autovacuum worker that held a table would make that
-- TRUNCATE wait until the deadlock check cancels it (deadlock_timeout, a second by default).
CREATE TABLE tickq.scratch_seed (relation text PRIMARY KEY, content jsonb NOT NULL);
COMMENT ON TABLE tickq.scratch_seed IS
'Scratch databases only: each tickq table''s rows (a JSON array) and each sequence''s position '
'(last_value, is_called) as the template had them; a used scratch database is put back to them.';
DO $$
DECLARE
    v_relation regclass;
BEGIN
    FOR v_relation IN
        SELECT c.oid::regclass FROM pg_class AS c
        WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'r' AND c.relname <> 'scratch_seed'
        ORDER BY c.relname
    LOOP
        EXECUTE format('INSERT INTO tickq.scratch_seed SELECT %L, jsonb_agg(to_jsonb(t)) FROM %s AS t'
            ' HAVING count(*) > 0', v_relation, v_relation);
        EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)',
            v_relation);
    END LOOP;
    FOR v_relation IN
        SELECT c.oid::regclass FROM pg_class AS c
        WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'S'
        ORDER BY c.relname
    LOOP
        EXECUTE format('INSERT INTO tickq.scratch_seed SELECT %L, jsonb_build_object(''last_value'', s.last_value,'
            ' ''is_called'', s.is_called) FROM %s AS s', v_relation, v_relation);
    END LOOP;
END
$$
;

-- The rows of a tickq table (sorted, as JSON) or the position of a sequence, as a scratch
-- database's state is read and compared (tickq.scratch_state, tickq.scratch_restore).
CREATE FUNCTION tickq.scratch_rows(p_relation regclass, p_sequence boolean) RETURNS jsonb
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_rows jsonb;
BEGIN
    IF p_sequence THEN
        EXECUTE format('SELECT jsonb_build_object(''last_value'', s.last_value, ''is_called'', s.is_called) FROM %s AS s',
            p_relation) INTO v_rows;
    ELSE
        EXECUTE format('SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text), ''[]'') FROM %s AS t',
            p_relation) INTO v_rows;
    END IF;
    RETURN v_rows;
END
$$;
COMMENT ON FUNCTION tickq.scratch_rows(regclass, boolean) IS
'Scratch databases only: a table''s rows as a JSON array sorted by their text, or a sequence''s '
'position (last_value, is_called).';

-- Where each tickq table and sequence of a scratch database should be (its seed, unless p_state
-- says otherwise), keyed schema.name: what tickq.scratch_state reads and tickq.scratch_restore
-- writes. A table's seed rows sorted as tickq.scratch_rows sorts them.
CREATE FUNCTION tickq.scratch_targets(p_state jsonb)
RETURNS TABLE (relation regclass, name text, is_sequence boolean, depth integer, target jsonb)
LANGUAGE sql STABLE
AS $$
    -- depth: the longest chain of foreign keys from the table to another (0: none), so that a
    -- table is written after those it references.
    WITH RECURSIVE refs (relation, depth) AS (
        SELECT c.oid, 0 FROM pg_class AS c WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'r'
        UNION ALL
        SELECT f.conrelid, r.depth + 1 FROM refs AS r
        INNER JOIN pg_constraint AS f ON f.contype = 'f' AND f.confrelid = r.relation AND f.conrelid <> r.relation
        WHERE r.depth < 20
    )
    SELECT c.oid::regclass, format('%I.%I', 'tickq', c.relname), c.relkind = 'S',
        coalesce((SELECT max(r.depth) FROM refs AS r WHERE r.relation = c.oid), 0),
        coalesce(p_state -> format('%I.%I', 'tickq', c.relname),
            CASE WHEN c.relkind = 'S' THEN s.content
                ELSE (SELECT coalesce(jsonb_agg(e.row ORDER BY e.row::text), '[]')
                    FROM jsonb_array_elements(coalesce(s.content, '[]')) AS e (row)) END)
    FROM pg_class AS c
    LEFT JOIN tickq.scratch_seed AS s ON s.relation::regclass = c.oid
    WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind IN ('r', 'S') AND c.relname <> 'scratch_seed'
$$;
COMMENT ON FUNCTION tickq.scratch_targets(jsonb) IS
'Scratch databases only: each tickq table and sequence with what it should hold (p_state''s '
'entry, else its seed) and its depth of foreign keys.';

CREATE FUNCTION tickq.scratch_state() RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- What differs from the seed, as tickq.scratch_restore takes it: {"tickq.job_kind": [rows],
    -- "tickq.job_run_id_seq": {"last_value": .., "is_called": ..}, ...}.
    SELECT coalesce(jsonb_object_agg(t.name, r.now), '{}')
    FROM tickq.scratch_targets('{}') AS t
    CROSS JOIN LATERAL tickq.scratch_rows(t.relation, t.is_sequence) AS r (now)
    WHERE r.now IS DISTINCT FROM t.target
$$;
COMMENT ON FUNCTION tickq.scratch_state() IS
'Scratch databases only: the tables and sequences that differ from the template''s (its seed), '
'their rows and positions, keyed schema.name: tickq.scratch_restore writes them in another scratch '
'database.';

CREATE FUNCTION tickq.scratch_restore(p_state jsonb) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_target record;
    v_wrote boolean;
    v_dirty regclass[] := '{}'::regclass[];
    v_more regclass[];
    v_columns text;
BEGIN
    -- The tables whose rows are not their target's are emptied in one TRUNCATE (new, empty
    -- files: no bloat carried from the last check), with every table that references one of
    -- them (TRUNCATE asks for it), and written again; every sequence is put where its target
    -- says. A table whose target is empty is only asked whether it holds a row (job_run may hold
    -- a month of runs). queue_registry goes last: a write of another table forgets its digest
    -- (tickq.forget_registry_digest).
    FOR v_target IN SELECT * FROM tickq.scratch_targets(p_state) AS t WHERE NOT t.is_sequence LOOP
        IF v_target.target = '[]' THEN
            EXECUTE format('SELECT EXISTS (SELECT FROM %s)', v_target.relation) INTO v_wrote;
        ELSE
            v_wrote := tickq.scratch_rows(v_target.relation, false) IS DISTINCT FROM v_target.target;
        END IF;
        IF v_wrote THEN
            v_dirty := v_dirty || v_target.relation;
        END IF;
    END LOOP;
    LOOP  -- and every table that references them, as TRUNCATE requires
        v_more := ARRAY(
            SELECT DISTINCT f.conrelid::regclass FROM pg_constraint AS f
            WHERE f.contype = 'f' AND f.confrelid = ANY(v_dirty) AND NOT f.conrelid = ANY(v_dirty));
        EXIT WHEN cardinality(v_more) = 0;
        v_dirty := v_dirty || v_more;
    END LOOP;
    IF cardinality(v_dirty) > 0 AND NOT 'tickq.queue_registry'::regclass = ANY(v_dirty) THEN
        v_dirty := v_dirty || 'tickq.queue_registry'::regclass;
    END IF;
    IF cardinality(v_dirty) > 0 THEN
        EXECUTE (SELECT 'TRUNCATE ' || string_agg(d.relation::text, ', ') FROM unnest(v_dirty) AS d (relation));
    END IF;
    FOR v_target IN
        SELECT * FROM tickq.scratch_targets(p_state) AS t
        ORDER BY t.relation = 'tickq.queue_registry'::regclass, t.depth, t.name
    LOOP
        IF v_target.is_sequence THEN
            PERFORM setval(v_target.relation, (v_target.target ->> 'last_value')::bigint,
                (v_target.target ->> 'is_called')::boolean);
            CONTINUE;
        END IF;
        CONTINUE WHEN NOT v_target.relation = ANY(v_dirty) OR v_target.target = '[]';
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_columns
        FROM pg_attribute AS a
        WHERE a.attrelid = v_target.relation AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM jsonb_populate_recordset(NULL::%s, $1)',
            v_target.relation, v_columns, v_columns, v_target.relation) USING v_target.target;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.scratch_restore(jsonb) IS
'Scratch databases only: puts every tickq table and sequence where p_state (tickq.scratch_state '
'of another scratch database) says, and the rest where the template had them (tickq.scratch_seed), '
'emptying and writing only the tables that differ.';
