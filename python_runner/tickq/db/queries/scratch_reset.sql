-- A used scratch database put back to what the template held (scratch_seed.sql): every tickq
-- table emptied in one TRUNCATE (new, empty files: no bloat carried from the last check), the
-- template's rows written again, each sequence where it stood. queue_registry goes last: a write
-- of the slot rows forgets its digest (tickq.forget_registry_digest), so it is written after them.
-- tests_py/test_scratch_pool.py compares every table and sequence with a fresh copy.
DO $$
DECLARE
    v_seed record;
    v_columns text;
BEGIN
    EXECUTE (
        SELECT 'TRUNCATE ' || string_agg(c.oid::regclass::text, ', ' ORDER BY c.relname) FROM pg_class AS c
        WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'r' AND c.relname <> 'scratch_seed');
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
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_columns
        FROM pg_attribute AS a
        WHERE a.attrelid = v_seed.relation AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '';
        EXECUTE format('INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM jsonb_populate_recordset(NULL::%s, $1)',
            v_seed.relation, v_columns, v_columns, v_seed.relation) USING v_seed.content;
    END LOOP;
END
$$
