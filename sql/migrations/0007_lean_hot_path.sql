-- 0007: less work on every claim and report (figures in bench/README.md).
--
-- Indexes written on every lease, release or report that answer no question another index
-- cannot:
-- - job_kind_claimable_by_due: the oldest due kinds of all lanes (aging) are the first rows of
--   each lane's range of job_kind_claimable, which claim_jobs reads anyway;
-- - job_kind_leased: the leased kinds (never more than settings.slots) are a range of
--   job_kind_run;
-- - job_run_running: a live run is the one a kind's lease points at (job_kind.run_id).
--
-- PostgreSQL compiles every CHECK constraint of a table afresh in each statement that writes
-- it, and a claim and a report each write job_kind twice. The rules on the registry columns,
-- which only tickq.sync_registry writes, move into one trigger that fires only when one of
-- those columns is written (with the zone check it replaces); the constraint names stay in its
-- errors. The rules on the columns claims and reports write stay CHECK constraints.

DROP INDEX tickq.job_kind_claimable_by_due;
DROP INDEX tickq.job_kind_leased;
DROP INDEX tickq.job_run_running;

ALTER TABLE tickq.job_kind
DROP CONSTRAINT name_format,
DROP CONSTRAINT every_positive,
DROP CONSTRAINT at_times_not_empty,
DROP CONSTRAINT on_days_iso,
DROP CONSTRAINT timeout_positive,
DROP CONSTRAINT retries_not_negative,
DROP CONSTRAINT one_schedule,
DROP CONSTRAINT on_days_need_at,
DROP CONSTRAINT retired_is_disabled;

DROP TRIGGER timezone_known ON tickq.job_kind;
DROP FUNCTION tickq.check_kind_timezone();

CREATE FUNCTION tickq.check_kind() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_rule text;
    v_problem text;
BEGIN
    SELECT r.rule, r.problem INTO v_rule, v_problem
    FROM (VALUES
        (1, 'name_format', NOT NEW.name ~ '^[a-z0-9][a-z0-9_.-]{0,99}$',
            'the name must be 1-100 of a-z 0-9 _ . - starting with a letter or digit'),
        (2, 'one_schedule', (NEW.every IS NULL) = (NEW.at_times IS NULL),
            'exactly one of every and at_times must be set'),
        (3, 'every_positive', NEW.every <= '0'::interval,
            format('every must be positive, got %s', NEW.every)),
        (4, 'at_times_not_empty', cardinality(NEW.at_times) = 0, 'at_times must not be empty'),
        (5, 'on_days_need_at', NEW.on_days IS NOT NULL AND NEW.at_times IS NULL,
            'on_days needs at_times'),
        (6, 'on_days_iso', NOT (cardinality(NEW.on_days) >= 1
            AND NEW.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]),
            format('on_days must be ISO weekdays 1-7, got %s', NEW.on_days)),
        (7, 'timeout_positive', NEW.timeout <= '0'::interval,
            format('timeout must be positive, got %s', NEW.timeout)),
        (8, 'retries_not_negative', NEW.retries < 0,
            format('retries must be 0 or more, got %s', NEW.retries)),
        (9, 'retired_is_disabled', NEW.retired_at IS NOT NULL AND NEW.enabled,
            'a retired kind must be disabled'),
        (10, 'timezone_known', NOT tickq.is_timezone(NEW.timezone),
            format('unknown time zone "%s"', NEW.timezone))
    ) AS r (n, rule, broken, problem)
    WHERE r.broken
    ORDER BY r.n
    LIMIT 1;
    IF v_rule IS NOT NULL THEN
        RAISE EXCEPTION 'kind "%": %', NEW.name, v_problem
            USING ERRCODE = 'check_violation', CONSTRAINT = v_rule, SCHEMA = 'tickq',
            TABLE = 'job_kind', HINT = 'The registry file is checked by tickq.sync_registry first.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_kind() IS
'Trigger: refuses a job_kind row that breaks a rule of its registry columns (name format, one '
'schedule, positive cadence and timeout, ISO weekdays, known time zone, ...), naming the rule '
'and the value; fires only when one of those columns is written.';

CREATE TRIGGER kind_valid
BEFORE INSERT OR UPDATE OF name, every, at_times, on_days, timezone, timeout, retries, enabled,
retired_at ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind();
