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
-- 99_privileges.sql, applied last, drops any function no file defined this time, and grants,
-- comments and settings are written by the files each time, so nothing of a dropped function is
-- lost.
DO $$
BEGIN
    IF coalesce(current_setting('tickq.applying_api', true), '') <> '' THEN
        EXECUTE coalesce((
            SELECT string_agg(format('DROP ROUTINE %s;', p.oid::regprocedure), ' ' ORDER BY p.oid)
            FROM pg_catalog.pg_proc AS p
            WHERE p.pronamespace = 'tickq'::regnamespace
                AND NOT EXISTS (
                    SELECT FROM pg_catalog.pg_depend AS d
                    WHERE d.refclassid = 'pg_catalog.pg_proc'::regclass
                        AND d.refobjid = p.oid
                        AND d.deptype IN ('n', 'a')
                )
        ), 'SELECT');
    END IF;
END
$$;
