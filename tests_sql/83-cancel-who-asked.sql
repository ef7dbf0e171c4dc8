-- Who asked for a cancel is what the database saw, not whatever the caller passes: the session's
-- role (and, on PostgreSQL 16 and later, how the server authenticated it when that names
-- someone else), then the client's own claim (OS user and host), labelled as a claim, cleaned
-- of control characters and bounded. Nothing of it depends on session state: it works through
-- a transaction pooler, each call on its own.
BEGIN;
SELECT plan(5);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 600},
        "b": {"command": ["x"], "every": 3600, "timeout": 600},
        "c": {"command": ["x"], "every": 3600, "timeout": 600}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name <> 'tickq.housekeeping';
SELECT is((SELECT count(*)::integer FROM tickq.claim_jobs(3, 'host:1', '2026-06-01 10:01Z')), 3,
    'the three claimed');

-- A dispatcher role of this test, marked as sql/roles.sql marks it (rolled back with the rest).
CREATE ROLE tq83_dispatcher;
DO $$
BEGIN
    EXECUTE format('ALTER ROLE tq83_dispatcher IN DATABASE %I SET tickq.access = %L',
        current_database(), 'dispatcher');
END
$$;
-- the dispatcher role granted
SELECT * FROM tickq.grant_access();
-- The identity the server authenticated this session with, as the function adds it.
CREATE TEMPORARY TABLE identity AS SELECT ''::text AS shown;
DO $$
DECLARE
    v_identity text;
BEGIN
    IF current_setting('server_version_num')::integer >= 160000 THEN
        EXECUTE 'SELECT system_user' INTO v_identity;
    END IF;
    UPDATE identity SET shown = coalesce(format(' (authenticated as %s)', v_identity), '');
END
$$;
GRANT SELECT ON identity TO tq83_dispatcher;

SET SESSION AUTHORIZATION tq83_dispatcher;
SELECT lives_ok($$
    SELECT * FROM tickq.request_cancel('a', 'x', 'admin@elsewhere', '2026-06-01 10:02Z');
    SELECT * FROM tickq.request_cancel('b', 'x', E'eve\n2026 ERROR forged\x1b[2J' || repeat('y', 300),
        '2026-06-01 10:02Z');
    SELECT * FROM tickq.request_cancel('c', 'x', NULL, '2026-06-01 10:02Z');
$$, 'the dispatcher role asks three cancels, claiming to be someone else');
RESET SESSION AUTHORIZATION;

SELECT results_eq($$SELECT r.cancel_by, r.cancel_role FROM tickq.job_run AS r WHERE r.kind = 'a'$$,
    $$SELECT 'tq83_dispatcher' || shown || ', claiming to be admin@elsewhere', 'tq83_dispatcher'
      FROM identity$$,
    'the role the database saw comes first; the caller''s text only as its claim');
SELECT results_eq($$SELECT r.cancel_by FROM tickq.job_run AS r WHERE r.kind = 'b'$$,
    $$SELECT 'tq83_dispatcher' || shown || ', claiming to be eve?2026 ERROR forged?[2J'
        || repeat('y', 200 - 25) FROM identity$$,
    'a claim with control characters is cleaned and cut to 200 characters');
SELECT results_eq($$SELECT r.cancel_by FROM tickq.job_run AS r WHERE r.kind = 'c'$$,
    $$SELECT 'tq83_dispatcher' || shown FROM identity$$, 'no claim: the role alone');

SELECT * FROM finish();
ROLLBACK;
