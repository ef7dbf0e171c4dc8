-- For the scratch template only (tickq.db.scratch): the tables the simulation writes need no
-- WAL, since nothing in a scratch database outlives it. Unlogged: every tickq table the
-- migrated template holds no row of, and tickq.slot, whose rows every sync makes again
-- (tickq.sync_slots). A server that crashes empties unlogged tables, the template's too, and
-- these are empty then anyway: a template never loses a row it had. A table another logged
-- table references stays logged (PostgreSQL requires it), so referencing tables go first.
DO $$
DECLARE
    v_table regclass;
    v_empty boolean;
    v_changed boolean;
    v_seen regclass[] := '{}';
BEGIN
    LOOP
        v_changed := false;
        FOR v_table IN
            SELECT c.oid::regclass FROM pg_class AS c
            WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'r' AND c.relpersistence = 'p'
                AND NOT c.oid::regclass = ANY(v_seen)
                AND NOT EXISTS (
                    SELECT FROM pg_constraint AS f INNER JOIN pg_class AS r ON f.conrelid = r.oid
                    WHERE f.contype = 'f' AND f.confrelid = c.oid AND f.conrelid <> c.oid
                        AND r.relpersistence = 'p')
            ORDER BY c.relname
        LOOP
            v_seen := v_seen || v_table;
            EXECUTE format('SELECT NOT EXISTS (SELECT FROM %s)', v_table) INTO v_empty;
            IF v_empty OR v_table = 'tickq.slot'::regclass THEN
                EXECUTE format('ALTER TABLE %s SET UNLOGGED', v_table);
                v_changed := true;
            END IF;
        END LOOP;
        EXIT WHEN NOT v_changed;  -- else the tables they reference may be free to go now
    END LOOP;
END
$$
