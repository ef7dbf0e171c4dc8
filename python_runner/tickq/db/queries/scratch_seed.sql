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
