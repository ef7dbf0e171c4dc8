-- The start of an application of the API files, which run in name order in one transaction
-- (tickq.applying_api is set for it by the migrator: a file run alone drops nothing here).
--
-- Every function of the schema that nothing else in the database names (no trigger, view,
-- column default, constraint, domain or index depends on it) is dropped first, so each file
-- creates its functions afresh. A file may then change a function's return type, rename or
-- remove its parameters, or drop an overload that would make a call ambiguous beside the new
-- one, with no migration to drop the old signature: CREATE OR REPLACE can do none of these.
-- A function something depends on (a trigger's body, a view's) stays and is replaced in place;
-- changing its signature still needs a migration, together with what depends on it.
-- A grant of a function to a role tickq does not manage (one without the setting tickq.access,
-- such as a monitor's) is kept in the setting tickq.kept_grants for this transaction, and
-- 99_privileges.sql gives it again to the function of the same signature; grants, comments and
-- settings of tickq's own are written by the files each time, so nothing of a dropped function
-- is lost. 99_privileges.sql also drops, at the end, any function no file defined this time.
DO $$
DECLARE
    v_drops text;
    v_grants jsonb;
BEGIN
    IF coalesce(current_setting('tickq.applying_api', true), '') = '' THEN
        RETURN;
    END IF;
    WITH droppable AS (
        SELECT p.oid::regprocedure AS routine, p.proowner, p.proacl
        FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'tickq'::regnamespace
            AND NOT EXISTS (
                SELECT FROM pg_catalog.pg_depend AS d
                WHERE d.refclassid = 'pg_catalog.pg_proc'::regclass
                    AND d.refobjid = p.oid
                    AND d.deptype IN ('n', 'a')
            )
    )
    SELECT
        (SELECT string_agg(format('DROP ROUTINE %s;', d.routine), ' ' ORDER BY d.routine) FROM droppable AS d),
        (SELECT jsonb_agg(jsonb_build_object(
            'routine', d.routine::text, 'grantee', pg_catalog.pg_get_userbyid(a.grantee),
            'grantable', a.is_grantable
        ))
        FROM droppable AS d CROSS JOIN LATERAL aclexplode(d.proacl) AS a
        WHERE a.grantee NOT IN (0, d.proowner) AND a.privilege_type = 'EXECUTE')
    INTO v_drops, v_grants;
    PERFORM set_config('tickq.kept_grants', coalesce(v_grants, '[]')::text, true);
    EXECUTE coalesce(v_drops, 'SELECT');
END
$$;
