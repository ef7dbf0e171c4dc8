-- Who may call what. Applied last (API files run in name order), so it covers every function the
-- other files define, and re-applied with them, so nothing here is lost when a file drops and
-- recreates a function or a view (report_run, queue_status...).
--
-- Three kinds of role (sql/roles.sql creates them): the owner of the schema, who migrates; a
-- dispatcher, who calls exactly the functions the runner calls and holds no right on any table;
-- a reader, who selects from the views. Functions a dispatcher or reader calls run as their owner
-- (SECURITY DEFINER) with a pinned search_path, so they are the only way to the tables.

-- The schema's functions are exactly those the API files define. A function no file defined in
-- this application is left from an earlier tickq (an old signature, a function since removed):
-- it is dropped, so an upgraded database has the functions of a fresh one, and a file that
-- changes a signature needs no DROP of the old one. CREATE OR REPLACE writes a function's
-- catalog row, so the ones defined now are those whose row this transaction wrote; hence this
-- runs before the grants below, which write every row. Only when the migrator applies the files
-- (tickq.applying_api is set for its transaction): a file run alone drops nothing.
DO $$
DECLARE
    v_routine regprocedure;
BEGIN
    IF coalesce(current_setting('tickq.applying_api', true), '') = '' THEN
        RETURN;
    END IF;
    FOR v_routine IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'tickq'::regnamespace AND p.xmin <> pg_catalog.pg_current_xact_id()::xid
        ORDER BY p.oid
    LOOP
        EXECUTE format('DROP ROUTINE %s', v_routine);
    END LOOP;
END
$$;

-- A grant of a function to a role tickq does not manage, kept by 00_api_begin.sql when it dropped
-- the function, is given again to the function of the same signature if a file created one
-- (grant_access below then sets the managed roles' privileges exactly).
DO $$
DECLARE
    v_kept record;
BEGIN
    -- Only in the migrator's application, where 00_api_begin.sql wrote the setting: a file run
    -- alone gives nothing, whatever a session or a role's defaults put in it. Each routine is
    -- named as the catalog names it (regprocedure), in schema tickq only.
    IF coalesce(current_setting('tickq.applying_api', true), '') = '' THEN
        RETURN;
    END IF;
    FOR v_kept IN
        SELECT to_regprocedure(k.routine) AS routine, k.grantee, k.grantable
        FROM jsonb_to_recordset(coalesce(nullif(current_setting('tickq.kept_grants', true), ''), '[]')::jsonb)
            AS k (routine text, grantee text, grantable boolean)
        INNER JOIN pg_catalog.pg_proc AS p ON p.oid = to_regprocedure(k.routine)
        WHERE p.pronamespace = 'tickq'::regnamespace
            AND EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = k.grantee)
    LOOP
        EXECUTE format('GRANT EXECUTE ON ROUTINE %s TO %I%s', v_kept.routine, v_kept.grantee,
            CASE WHEN v_kept.grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END
$$;

-- Nothing in the schema is callable by every role; grants below name roles one by one.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tickq FROM public;

CREATE OR REPLACE FUNCTION tickq.access_privileges() RETURNS TABLE (access text, privilege text, object_name text)
LANGUAGE sql IMMUTABLE
AS $$
    -- Functions are named without arguments: every signature of the name is granted, so a
    -- change of arguments (with its DROP of the old signature) needs no change here.
    SELECT g.access, g.privilege, o.name
    FROM (VALUES
        ('dispatcher', 'EXECUTE', ARRAY[
            -- what `tickq tick`, `run`, `sync` and `status` call (python_runner/tickq/db/queries)
            'sync_registry', 'claim_jobs', 'start_run', 'report_run', 'take_alerts',
            'housekeeping', 'capacity_total_at', 'capacity_verdict_at', 'queue_status_at',
            'stale_due_at', 'capacity_at', 'registry_problems', 'claim_manual', 'report_late_run',
            'live_leases',
            -- an operator's everyday (sql/api/11_operator.sql)
            'pause_kind', 'resume_kind', 'health_problems', 'record_tick', 'next_due_at',
            'release_dead_lease',
            -- cancel (sql/api/28_cancel.sql)
            'request_cancel', 'cancels_requested', 'registry_mirror',
            -- retired kinds, listed and forgotten (sql/api/25_queue_registry.sql)
            'retired_kinds_at', 'forget_kind', 'queue_registry_at',
            -- chains (sql/api/08_chain.sql)
            'chain_start', 'report_step',
            -- agents: the dispatcher starts them, the agent runner (given the dispatcher's URL)
            -- reads and records them, and `tickq agent` manages them
            'agent_for_kind', 'load_agent', 'record_agent_turn', 'save_agent', 'pause_agent',
            'resume_agent', 'remove_agent', 'agents_at', 'agent_next_runs', 'agent_runs',
            'agent_transcript', 'agent_run_transcript', 'agent_detail', 'agents_export',
            -- the status page (written after a tick when the registry asks), history, upcoming
            'report_header_at', 'report_dispatchers_at', 'report_timeline_at', 'report_waiting_at',
            'report_slots_at', 'report_kinds_at', 'upcoming_at', 'schedule_slots',
            'schedule_warnings',
            -- `tickq legacy import`: how late the tick runs each kind's slots, the tick that does not
            'tick_lateness', 'tick_on_time', 'on_time_tick', 'kind_history', 'run_detail',
            -- Prometheus metrics (`tickq metrics`, the registry's metrics_file, serve's /metrics)
            'metrics_text', 'explain_kind',
            -- weights and pools seen (sql/api/26_pools_seen.sql): status, the page
            'slot_occupancy_at', 'pool_occupancy_at', 'report_pools_at'
        ]),
        ('dispatcher', 'SELECT', ARRAY[
            'pool_occupancy', 'queue_status', 'stale_due', 'capacity',
            -- the migrator's bookkeeping: read to see that the schema is current, without DDL
            'migration', 'api_checksum'
        ]),
        ('reader', 'EXECUTE', ARRAY[
            -- a view calls its function with the privileges of the role that selects from it
            'queue_status_at', 'stale_due_at', 'capacity_at',
            -- the status page, history and upcoming (`tickq report`, `serve`, `history`, `upcoming`)
            'capacity_total_at', 'capacity_verdict_at', 'report_header_at',
            'report_dispatchers_at', 'report_timeline_at', 'report_waiting_at', 'report_slots_at',
            'report_kinds_at', 'upcoming_at', 'kind_history', 'run_detail', 'metrics_text',
            'explain_kind', 'slot_occupancy_at', 'pool_occupancy_at', 'report_pools_at',
            'agents_at', 'health_problems', 'retired_kinds_at', 'queue_registry_at',
            -- `tickq check` and `simulate` read the queue's agents to simulate beside the registry
            'agents_export'
        ]),
        ('reader', 'SELECT', ARRAY[
            'pool_occupancy', 'queue_status', 'stale_due', 'capacity', 'migration', 'api_checksum'
        ])
    ) AS g (access, privilege, names)
    CROSS JOIN LATERAL unnest(g.names) AS o (name)
$$;
COMMENT ON FUNCTION tickq.access_privileges() IS
'What each access (dispatcher, reader) is granted: EXECUTE on functions of schema tickq (by name, '
'every signature) and SELECT on its views and the migrator''s bookkeeping tables. Nothing else.';

-- Every function a dispatcher or reader may call runs as its owner, with a search_path that no
-- caller can put objects in ahead of the schema's own (pg_temp last). So does the deferred
-- constraint trigger: it fires at the commit of a dispatcher's transaction, as the dispatcher.
DO $$
DECLARE
    v_function regprocedure;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure
        FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'tickq'::regnamespace
            AND (p.proname IN (
                SELECT a.object_name FROM tickq.access_privileges() AS a WHERE a.privilege = 'EXECUTE'
            ) OR p.proname = 'check_lease_covers_timeouts')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = pg_catalog, tickq, pg_temp',
            v_function);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION tickq.grant_access(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (role_name text, access text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_role record;
    v_grant record;
    v_function regprocedure;
    v_found integer;
BEGIN
    -- A role's access in this database is its setting tickq.access (ALTER ROLE ... IN DATABASE
    -- ... SET tickq.access = 'dispatcher'): kept by PostgreSQL per database, outside the schema,
    -- so it is there before the first migration and after every re-applied API file.
    FOR v_role IN
        SELECT r.rolname::text AS rolname, substr(c.setting, length('tickq.access=') + 1) AS access
        FROM pg_catalog.pg_db_role_setting AS s
        INNER JOIN pg_catalog.pg_database AS d ON s.setdatabase = d.oid
        INNER JOIN pg_catalog.pg_roles AS r ON s.setrole = r.oid
        CROSS JOIN LATERAL unnest(s.setconfig) AS c (setting)
        WHERE d.datname = current_database() AND c.setting LIKE 'tickq.access=%'
        ORDER BY r.rolname
    LOOP
        IF v_role.access NOT IN ('dispatcher', 'reader') THEN
            RAISE EXCEPTION 'role "%" has tickq.access = "%" in this database', v_role.rolname, v_role.access
                USING ERRCODE = 'TQ070',
                DETAIL = 'tickq.access is dispatcher or reader.',
                HINT = format('ALTER ROLE %I IN DATABASE %I SET tickq.access = ''dispatcher'' (or '
                    '''reader''), or RESET tickq.access; see sql/roles.sql.', v_role.rolname, current_database());
        END IF;
        -- Exactly the access's privileges: whatever the role held in the schema before goes.
        EXECUTE format('REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('REVOKE CREATE ON SCHEMA tickq FROM %I', v_role.rolname);
        EXECUTE format('GRANT USAGE ON SCHEMA tickq TO %I', v_role.rolname);
        FOR v_grant IN
            SELECT a.privilege, a.object_name FROM tickq.access_privileges() AS a
            WHERE a.access = v_role.access
        LOOP
            IF v_grant.privilege = 'SELECT' THEN
                EXECUTE format('GRANT SELECT ON tickq.%I TO %I', v_grant.object_name, v_role.rolname);
                CONTINUE;
            END IF;
            v_found := 0;
            FOR v_function IN
                SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
                WHERE p.pronamespace = 'tickq'::regnamespace AND p.proname = v_grant.object_name
            LOOP
                EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', v_function, v_role.rolname);
                v_found := v_found + 1;
            END LOOP;
            IF v_found = 0 THEN
                RAISE EXCEPTION 'tickq.access_privileges names function tickq.%, which does not exist',
                    v_grant.object_name
                    USING ERRCODE = 'TQ071', HINT = 'Keep the list in sql/api/99_privileges.sql current.';
            END IF;
        END LOOP;
        role_name := v_role.rolname;
        access := v_role.access;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.grant_access(timestamptz) IS
'Gives every role whose setting tickq.access is dispatcher or reader in this database exactly the '
'privileges tickq.access_privileges lists for it (and takes away any other right in the schema). '
'Run by the migrator each time the API is applied, and by sql/roles.sql. Returns the roles.';

REVOKE ALL ON FUNCTION tickq.access_privileges() FROM public;
REVOKE ALL ON FUNCTION tickq.grant_access(timestamptz) FROM public;

SELECT count(*) FROM tickq.grant_access();
