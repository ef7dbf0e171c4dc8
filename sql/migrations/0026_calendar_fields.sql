-- 0026: calendar fields (days of the month, months, nth weekdays) and cron strings.
--
-- A calendar kind (at_times) may name days of the month (days: 1..31 and -1..-31 counted from
-- the month's end), months (1..12) and, in on_days beside the ISO weekdays 1..7, nth weekdays
-- coded 10 * n + weekday (11 = 1st mon .. 57 = 5th sun) and last weekdays 90 + weekday (95 =
-- last fri). A cron kind keeps its five-field string as given (cron) and no other schedule
-- column but its timezone. The arithmetic is sql/api/01_calendar.sql's.

ALTER TABLE tickq.job_kind
ADD COLUMN days smallint[],
ADD COLUMN months smallint[],
ADD COLUMN cron text;
COMMENT ON COLUMN tickq.job_kind.days IS
'Days of the month of a calendar kind (1..31, -1 = the last day .. -31); NULL for every day.';
COMMENT ON COLUMN tickq.job_kind.months IS
'Months of a calendar kind (1 = January .. 12); NULL for every month.';
COMMENT ON COLUMN tickq.job_kind.cron IS
'A five-field cron string (or an @ form) as the registry gave it; NULL for every and at kinds.';

-- A schedule's day and time rules in one value, as the schedule functions read them: times of
-- day on wall-clock rules (an at schedule, or a cron string whose minute and hour are single
-- numbers), or minutes and hours on real time (any other cron string); the day filters; either
-- (cron's rule that a day matches when its day of the month OR its weekday does, both being
-- restricted); the zone.
CREATE TYPE tickq.calendar AS (
    times time [],
    minutes smallint [],
    hours smallint [],
    weekdays smallint [],
    days smallint [],
    months smallint [],
    either boolean,
    timezone text
);
COMMENT ON TYPE tickq.calendar IS
'A calendar schedule as tickq.calendar_next reads it: wall-clock times or real-time minutes and '
'hours, weekday (ISO, nth, last), day-of-month and month filters, the cron OR rule, the zone.';

CREATE OR REPLACE FUNCTION tickq.registry_limits(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (key text, low numeric, high numeric, unit text)
LANGUAGE sql IMMUTABLE
AS $$
    -- Durations in seconds (unit 's'); counts and fractions as they are. A key of the [agents]
    -- section is spelled as in the file ("agents.max_turns"); a tool's key stands for every
    -- tool ("agents.tools.timeout" bounds agents.tools.NAME.timeout). days and months bound the
    -- calendar fields (a day 0 is refused apart: -31..-1 count from the month's end), on.nth the
    -- n of an nth weekday ("5th mon").
    VALUES
        ('slots', 1, 1000, ''),
        ('retries', 0, 100, ''),
        ('keep_runs', 1, 100000, ''),
        ('alert_after', 1, 1000, ''),
        ('capacity_margin', 0, 0.9, ''),
        ('tick', 1, 86400, 's'),
        ('stale_after', 1, 30 * 86400, 's'),
        ('lease_margin', 1, 86400, 's'),
        ('retry_base', 1, 86400, 's'),
        ('retry_max', 1, 7 * 86400, 's'),
        ('housekeeping_every', 1, 86400, 's'),
        ('housekeeping_timeout', 1, 7 * 86400, 's'),
        ('retention', 1, 3650 * 86400, 's'),
        ('alert_timeout', 1, 3600, 's'),
        ('db_connect_timeout', 1, 600, 's'),
        ('db_statement_timeout', 1, 86400, 's'),
        ('db_lock_timeout', 1, 3600, 's'),
        ('every', 1, 366 * 86400, 's'),
        ('timeout', 1, 7 * 86400, 's'),
        ('days', -31, 31, ''),
        ('months', 1, 12, ''),
        ('on.nth', 1, 5, ''),
        ('agents.max_turns', 1, 6, ''),
        ('agents.timeout', 1, 600, 's'),
        ('agents.retries', 0, 10, ''),
        ('agents.deliver_timeout', 1, 300, 's'),
        ('agents.request_timeout', 1, 600, 's'),
        ('agents.http_attempts', 1, 10, ''),
        ('agents.tools.timeout', 1, 300, 's')
$$;
COMMENT ON FUNCTION tickq.registry_limits(timestamptz) IS
'The bounds of every number in the registry (durations in seconds): the one place they are '
'written. p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.check_kind() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_rule text;
    v_problem text;
BEGIN
    SELECT r.rule, r.problem INTO v_rule, v_problem
    FROM (VALUES
        (1, 'name_format', NOT tickq.kind_name_ok(NEW.name),
            'the name must be 1-100 of a-z 0-9 _ . - starting with a letter or digit'),
        (2, 'one_schedule', (NEW.every IS NOT NULL)::int + (NEW.at_times IS NOT NULL)::int
            + (NEW.cron IS NOT NULL)::int <> 1,
            'exactly one of every, at_times and cron must be set'),
        (3, 'every_bounded', NEW.every IS NOT NULL AND NOT tickq.within_limit('every', extract(EPOCH FROM NEW.every)),
            format('every must be from %s to %s seconds, got %s', (SELECT l.low FROM tickq.registry_limits() AS l
                WHERE l.key = 'every'), (SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'every'), NEW.every)),
        (4, 'at_times_not_empty', cardinality(NEW.at_times) = 0, 'at_times must not be empty'),
        (5, 'on_days_need_at', (NEW.on_days IS NOT NULL OR NEW.days IS NOT NULL OR NEW.months IS NOT NULL)
            AND NEW.at_times IS NULL,
            'on_days, days and months need at_times'),
        (6, 'on_days_iso', NOT (cardinality(NEW.on_days) >= 1 AND NOT EXISTS (
            SELECT FROM unnest(NEW.on_days) AS d (day)
            WHERE NOT (d.day BETWEEN 1 AND 7 OR d.day % 10 BETWEEN 1 AND 7 AND d.day / 10 BETWEEN 1 AND 5
                OR d.day BETWEEN 91 AND 97))),
            format('on_days must be ISO weekdays 1-7, nth weekdays 11-57 or last weekdays 91-97, got %s',
                NEW.on_days)),
        (7, 'timeout_bounded', NOT tickq.within_limit('timeout', extract(EPOCH FROM NEW.timeout)),
            format('timeout must be from %s to %s seconds, got %s', (SELECT l.low FROM tickq.registry_limits() AS l
                WHERE l.key = 'timeout'), (SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'timeout'), NEW.timeout)),
        (8, 'retries_bounded', NOT tickq.within_limit('retries', NEW.retries),
            format('retries must be from %s to %s, got %s', (SELECT l.low FROM tickq.registry_limits() AS l
                WHERE l.key = 'retries'), (SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'retries'),
                NEW.retries)),
        (9, 'retired_is_disabled', NEW.retired_at IS NOT NULL AND NEW.enabled,
            'a retired kind must be disabled'),
        (10, 'timezone_known', NOT tickq.is_timezone(NEW.timezone),
            format('unknown time zone "%s"', NEW.timezone)),
        (11, 'at_times_distinct', cardinality(NEW.at_times)
            <> (SELECT count(DISTINCT t.at_time) FROM unnest(NEW.at_times) AS t (at_time)),
            format('at_times must not repeat, got %s', NEW.at_times)),
        (12, 'on_days_distinct', cardinality(NEW.on_days)
            <> (SELECT count(DISTINCT d.day) FROM unnest(NEW.on_days) AS d (day)),
            format('on_days must not repeat, got %s', NEW.on_days)),
        (13, 'days_of_month', NOT (cardinality(NEW.days) >= 1 AND NOT EXISTS (
            SELECT FROM unnest(NEW.days) AS d (day) WHERE d.day = 0 OR NOT tickq.within_limit('days', d.day))
            AND cardinality(NEW.days) = (SELECT count(DISTINCT d.day) FROM unnest(NEW.days) AS d (day))),
            format('days must be distinct days 1..31 or -1..-31, got %s', NEW.days)),
        (14, 'months_of_year', NOT (cardinality(NEW.months) >= 1 AND NOT EXISTS (
            SELECT FROM unnest(NEW.months) AS m (month) WHERE NOT tickq.within_limit('months', m.month))
            AND cardinality(NEW.months) = (SELECT count(DISTINCT m.month) FROM unnest(NEW.months) AS m (month))),
            format('months must be distinct months 1..12, got %s', NEW.months))
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
'Trigger: refuses a job_kind row that breaks a rule (name, one schedule of every, at_times and '
'cron, bounded cadence and timeout, weekdays, days of the month, months, known time zone, no '
'repeats), naming the rule and the value; fires only when one of those columns is written.';

DROP TRIGGER kind_valid ON tickq.job_kind;
CREATE TRIGGER kind_valid
BEFORE INSERT OR UPDATE OF name, every, at_times, on_days, days, months, cron, timezone, timeout, retries,
enabled, retired_at ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind();

-- describe_calendar reads a tickq.calendar (sql/api/01_schedule.sql).
DROP FUNCTION IF EXISTS tickq.describe_calendar(time[], smallint[], text, timestamptz);
