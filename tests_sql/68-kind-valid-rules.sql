-- The table's own guard (trigger kind_valid, tickq.check_kind): every rule refuses a row that
-- breaks it with its name as the constraint and the value in the message, the first rule broken
-- (in the rules' order) is the one named, valid rows of each schedule are let through, and an
-- update of a guarded column is guarded too. Pinned when the rules became one test at a time
-- (migration 0038): the same answers as the one query of all the rules before it.
BEGIN;
SELECT plan(28);

-- 'SQLSTATE constraint: message' of a statement, or 'accepted'
CREATE FUNCTION pg_temp.refusal(p_sql text) RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    v_state text;
    v_constraint text;
    v_message text;
BEGIN
    EXECUTE p_sql;
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_constraint = CONSTRAINT_NAME,
        v_message = MESSAGE_TEXT;
    RETURN v_state || ' ' || coalesce(v_constraint, '-') || ': ' || v_message;
END
$$;
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, due_at)
        VALUES ('Bad Name', '1 minute', '1 minute', now())$$),
    '23514 name_format: kind "Bad Name": the name must be 1-100 of a-z 0-9 _ . - starting'
    || ' with a letter or digit',
    'Bad Name');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, at_times, timeout, due_at)
        VALUES ('two', '1 minute', '{06:00}', '1 minute', now())$$),
    '23514 one_schedule: kind "two": exactly one of every, at_times and cron must be set',
    'two');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, timeout, due_at)
        VALUES ('none', '1 minute', now())$$),
    '23514 one_schedule: kind "none": exactly one of every, at_times and cron must be set',
    'none');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, due_at)
        VALUES ('neg', '-1 minute', '1 minute', now())$$),
    '23514 every_bounded: kind "neg": every must be from 1 to 31622400 seconds, got '
    || '-00:01:00',
    'neg');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, timeout, due_at)
        VALUES ('empty', '{}', '1 minute', now())$$),
    '23514 at_times_not_empty: kind "empty": at_times must not be empty',
    'empty');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, on_days, timeout, due_at)
        VALUES ('days', '1 hour', '{1}', '1 minute', now())$$),
    '23514 on_days_need_at: kind "days": on_days, days and months need at_times',
    'days');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, on_days, timeout, due_at)
        VALUES ('iso', '{06:00}', '{0,8}', '1 minute', now())$$),
    '23514 on_days_iso: kind "iso": on_days must be ISO weekdays 1-7, nth weekdays 11-57 '
    || 'or last weekdays 91-97, got {0,8}',
    'iso');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, on_days, timeout, due_at)
        VALUES ('isoempty', '{06:00}', '{}', '1 minute', now())$$),
    '23514 on_days_iso: kind "isoempty": on_days must be ISO weekdays 1-7, nth weekdays '
    || '11-57 or last weekdays 91-97, got {}',
    'isoempty');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, due_at)
        VALUES ('long', '1 minute', '100 days', now())$$),
    '23514 timeout_bounded: kind "long": timeout must be from 1 to 604800 seconds, got '
    || '100 days',
    'long');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, retries, due_at)
        VALUES ('retry', '1 minute', '1 minute', 1000, now())$$),
    '23514 retries_bounded: kind "retry": retries must be from 0 to 100, got 1000',
    'retry');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, retired_at, enabled, due_at)
        VALUES ('ret', '1 minute', '1 minute', now(), true, now())$$),
    '23514 retired_is_disabled: kind "ret": a retired kind must be disabled',
    'ret');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, timezone, timeout, due_at)
        VALUES ('zone', '{06:00}', 'Mars/Olympus', '1 minute', now())$$),
    '23514 timezone_known: kind "zone": unknown time zone "Mars/Olympus"',
    'zone');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, timezone, timeout, due_at)
        VALUES ('nozone', '{06:00}', NULL, '1 minute', now())$$),
    '23514 timezone_known: kind "nozone": unknown time zone ""',
    'nozone');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, timeout, due_at)
        VALUES ('twice', '{06:00,06:00}', '1 minute', now())$$),
    '23514 at_times_distinct: kind "twice": at_times must not repeat, got '
    || '{06:00:00,06:00:00}',
    'twice');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, on_days, timeout, due_at)
        VALUES ('daytwice', '{06:00}', '{1,1}', '1 minute', now())$$),
    '23514 on_days_distinct: kind "daytwice": on_days must not repeat, got {1,1}',
    'daytwice');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, days, timeout, due_at)
        VALUES ('dom', '{06:00}', '{0}', '1 minute', now())$$),
    '23514 days_of_month: kind "dom": days must be distinct days 1..31 or -1..-31, got '
    || '{0}',
    'dom');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, days, timeout, due_at)
        VALUES ('domtwice', '{06:00}', '{5,5}', '1 minute', now())$$),
    '23514 days_of_month: kind "domtwice": days must be distinct days 1..31 or -1..-31, '
    || 'got {5,5}',
    'domtwice');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, days, timeout, due_at)
        VALUES ('domempty', '{06:00}', '{}', '1 minute', now())$$),
    '23514 days_of_month: kind "domempty": days must be distinct days 1..31 or -1..-31, '
    || 'got {}',
    'domempty');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, months, timeout, due_at)
        VALUES ('mon', '{06:00}', '{13}', '1 minute', now())$$),
    '23514 months_of_year: kind "mon": months must be distinct months 1..12, got {13}',
    'mon');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, months, timeout, due_at)
        VALUES ('montwice', '{06:00}', '{2,2}', '1 minute', now())$$),
    '23514 months_of_year: kind "montwice": months must be distinct months 1..12, got '
    || '{2,2}',
    'montwice');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, at_times, timeout, due_at)
        VALUES ('Both Bad', '-1 minute', '{06:00}', '100 days', now())$$),
    '23514 name_format: kind "Both Bad": the name must be 1-100 of a-z 0-9 _ . - starting'
    || ' with a letter or digit',
    'Both Bad');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, at_times, timeout, due_at)
        VALUES ('bothbad', '-1 minute', '{06:00}', '100 days', now())$$),
    '23514 one_schedule: kind "bothbad": exactly one of every, at_times and cron must be '
    || 'set',
    'bothbad');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, due_at)
        VALUES ('neglong', '-1 minute', '100 days', now())$$),
    '23514 every_bounded: kind "neglong": every must be from 1 to 31622400 seconds, got '
    || '-00:01:00',
    'neglong');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, every, timeout, due_at)
        VALUES ('fine', '5 minutes', '1 minute', now())$$),
    'accepted',
    'fine');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, at_times, on_days, days, months, timezone,
    timeout, due_at)
        VALUES ('cal', '{06:00,18:30}', '{1,15,97}', '{1,-1}', '{1,12}', 'Europe/London', '1 minute', now())$$),
    'accepted',
    'cal');
SELECT is(pg_temp.refusal($$INSERT INTO tickq.job_kind (name, cron, timezone, timeout, due_at)
        VALUES ('cron', '*/5 * * * *', 'UTC', '1 minute', now())$$),
    'accepted',
    'cron');
SELECT is(pg_temp.refusal($$UPDATE tickq.job_kind SET retired_at = now()
        WHERE name = 'fine'$$),
    '23514 retired_is_disabled: kind "fine": a retired kind must be disabled',
    'fine');
SELECT is(pg_temp.refusal($$UPDATE tickq.job_kind SET leased_by = 'x', due_at = now()
        WHERE name = 'fine'$$),
    '23514 lease_complete: new row for relation "job_kind" violates check constraint '
    || '"lease_complete"',
    'fine');

SELECT * FROM finish();
ROLLBACK;
