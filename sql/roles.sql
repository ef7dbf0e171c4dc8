-- The roles of a tickq database: run once by an administrator (a superuser), in that database,
-- before the owner's first `tickq migrate`; again whenever a role is added or renamed. Safe to
-- run again: nothing is created twice.
--
--   owner       owns the schema tickq and migrates it (`tickq migrate`); nothing else needs it.
--   dispatcher  what `tickq tick`, `run`, `sync`, `check` and `status` run as: EXECUTE on the
--               functions the runner calls, no right on any table; those functions run as the
--               owner (SECURITY DEFINER, pinned search_path) and are the only way to the queue.
--   reader      SELECT on the views queue_status, stale_due and capacity, and the functions of the
--               status page, the metrics and what `check` reads: `tickq serve`, `metrics`, `status`,
--               `check`, dashboards and psql.
--
-- The roles are created with LOGIN and no password: give each one the way in your server
-- expects (\password NAME in psql for scram-sha-256, or peer/cert authentication in pg_hba.conf).
-- Each role's access is recorded as a per-database setting (tickq.access = 'dispatcher' or
-- 'reader'; see \drds in psql), from which tickq.grant_access gives the exact privileges, now if
-- the schema is migrated and again each time the migrator re-applies the API.
--
-- `tickq roles print --owner NAME --dispatcher NAME --reader NAME` prints this file with other
-- names in the three lines below; names are used only through format('%I').
SELECT set_config('tickq.roles_owner', 'tickq_owner', false);
SELECT set_config('tickq.roles_dispatcher', 'tickq_dispatcher', false);
SELECT set_config('tickq.roles_reader', 'tickq_reader', false);

DO $$
DECLARE
    v_owner text := current_setting('tickq.roles_owner');
    v_dispatcher text := current_setting('tickq.roles_dispatcher');
    v_reader text := current_setting('tickq.roles_reader');
    v_role text;
    v_schema_owner text;
BEGIN
    IF cardinality(ARRAY[v_owner, v_dispatcher, v_reader]) <> (
        SELECT count(DISTINCT r) FROM unnest(ARRAY[v_owner, v_dispatcher, v_reader]) AS r
    ) THEN
        RAISE EXCEPTION 'owner, dispatcher and reader must be three different roles, got %, %, %',
            v_owner, v_dispatcher, v_reader
            USING ERRCODE = 'TQ072', HINT = 'One role with every right is no least privilege.';
    END IF;
    FOREACH v_role IN ARRAY ARRAY[v_owner, v_dispatcher, v_reader] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = v_role) THEN
            EXECUTE format('CREATE ROLE %I LOGIN', v_role);
        END IF;
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), v_role);
    END LOOP;

    -- The owner owns the schema; a schema some other role owns is not taken over silently.
    SELECT n.nspowner::regrole::text INTO v_schema_owner
    FROM pg_catalog.pg_namespace AS n WHERE n.nspname = 'tickq';
    IF v_schema_owner IS NULL THEN
        EXECUTE format('CREATE SCHEMA tickq AUTHORIZATION %I', v_owner);
    ELSIF v_schema_owner <> quote_ident(v_owner) THEN
        RAISE EXCEPTION 'schema tickq is owned by %, not by %', v_schema_owner, v_owner
            USING ERRCODE = 'TQ073',
            DETAIL = 'The owner of the schema migrates it and owns every function the others call.',
            HINT = format('Give the schema and its objects to %I (REASSIGN OWNED BY %s TO %I, if that '
                'role owns nothing else in this database), or name %s as the owner.',
                v_owner, v_schema_owner, v_owner, v_schema_owner);
    END IF;
    EXECUTE 'REVOKE ALL ON SCHEMA tickq FROM public';
    -- Before the first migration too, so a dispatcher sees that the schema is not current.
    EXECUTE format('GRANT USAGE ON SCHEMA tickq TO %I, %I', v_dispatcher, v_reader);

    EXECUTE format('ALTER ROLE %I IN DATABASE %I SET tickq.access = %L',
        v_dispatcher, current_database(), 'dispatcher');
    EXECUTE format('ALTER ROLE %I IN DATABASE %I SET tickq.access = %L',
        v_reader, current_database(), 'reader');
    -- An owner marked by an earlier run as a dispatcher or reader would lose its rights.
    EXECUTE format('ALTER ROLE %I IN DATABASE %I RESET tickq.access', v_owner, current_database());

    IF to_regprocedure('tickq.grant_access(timestamptz)') IS NOT NULL THEN
        PERFORM tickq.grant_access();
    END IF;
END
$$;
