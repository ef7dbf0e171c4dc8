-- tickq.check_kind (the trigger kind_valid) tested every row it guards with one query of all its
-- rules, each rule's message built with it: the executor started that plan and a subplan for each
-- array test on every row, 0.5-0.65 ms a row, most of a sync's time per kind (bench/README.md).
-- The same rules in the same order, with the same names and messages, as plain tests one after
-- the other: an array is read only when the row has it, and a message is built only for the
-- first rule broken.
CREATE OR REPLACE FUNCTION tickq.check_kind() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_rule text;
    v_problem text;
BEGIN
    IF NOT tickq.kind_name_ok(NEW.name) THEN
        v_rule := 'name_format';
        v_problem := 'the name must be 1-100 of a-z 0-9 _ . - starting with a letter or digit';
    ELSIF (NEW.every IS NOT NULL)::int + (NEW.at_times IS NOT NULL)::int + (NEW.cron IS NOT NULL)::int <> 1 THEN
        v_rule := 'one_schedule';
        v_problem := 'exactly one of every, at_times and cron must be set';
    ELSIF NEW.every IS NOT NULL AND NOT tickq.within_limit('every', extract(EPOCH FROM NEW.every)) THEN
        v_rule := 'every_bounded';
        v_problem := (SELECT format('every must be from %s to %s seconds, got %s', l.low, l.high, NEW.every)
            FROM tickq.registry_limits() AS l WHERE l.key = 'every');
    ELSIF cardinality(NEW.at_times) = 0 THEN
        v_rule := 'at_times_not_empty';
        v_problem := 'at_times must not be empty';
    ELSIF (NEW.on_days IS NOT NULL OR NEW.days IS NOT NULL OR NEW.months IS NOT NULL) AND NEW.at_times IS NULL THEN
        v_rule := 'on_days_need_at';
        v_problem := 'on_days, days and months need at_times';
    ELSIF NEW.on_days IS NOT NULL AND NOT (cardinality(NEW.on_days) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.on_days) AS d (day)
        WHERE NOT (d.day BETWEEN 1 AND 7 OR d.day % 10 BETWEEN 1 AND 7 AND d.day / 10 BETWEEN 1 AND 5
            OR d.day BETWEEN 91 AND 97))) THEN
        v_rule := 'on_days_iso';
        v_problem := format('on_days must be ISO weekdays 1-7, nth weekdays 11-57 or last weekdays 91-97, got %s',
            NEW.on_days);
    ELSIF NOT tickq.within_limit('timeout', extract(EPOCH FROM NEW.timeout)) THEN
        v_rule := 'timeout_bounded';
        v_problem := (SELECT format('timeout must be from %s to %s seconds, got %s', l.low, l.high, NEW.timeout)
            FROM tickq.registry_limits() AS l WHERE l.key = 'timeout');
    ELSIF NOT tickq.within_limit('retries', NEW.retries) THEN
        v_rule := 'retries_bounded';
        v_problem := (SELECT format('retries must be from %s to %s, got %s', l.low, l.high, NEW.retries)
            FROM tickq.registry_limits() AS l WHERE l.key = 'retries');
    ELSIF NEW.retired_at IS NOT NULL AND NEW.enabled THEN
        v_rule := 'retired_is_disabled';
        v_problem := 'a retired kind must be disabled';
    ELSIF NOT tickq.is_timezone(NEW.timezone) THEN
        v_rule := 'timezone_known';
        v_problem := format('unknown time zone "%s"', NEW.timezone);
    ELSIF NEW.at_times IS NOT NULL
        AND cardinality(NEW.at_times) <> (SELECT count(DISTINCT t.at_time) FROM unnest(NEW.at_times) AS t (at_time)) THEN
        v_rule := 'at_times_distinct';
        v_problem := format('at_times must not repeat, got %s', NEW.at_times);
    ELSIF NEW.on_days IS NOT NULL
        AND cardinality(NEW.on_days) <> (SELECT count(DISTINCT d.day) FROM unnest(NEW.on_days) AS d (day)) THEN
        v_rule := 'on_days_distinct';
        v_problem := format('on_days must not repeat, got %s', NEW.on_days);
    ELSIF NEW.days IS NOT NULL AND NOT (cardinality(NEW.days) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.days) AS d (day) WHERE d.day = 0 OR NOT tickq.within_limit('days', d.day))
        AND cardinality(NEW.days) = (SELECT count(DISTINCT d.day) FROM unnest(NEW.days) AS d (day))) THEN
        v_rule := 'days_of_month';
        v_problem := format('days must be distinct days 1..31 or -1..-31, got %s', NEW.days);
    ELSIF NEW.months IS NOT NULL AND NOT (cardinality(NEW.months) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.months) AS m (month) WHERE NOT tickq.within_limit('months', m.month))
        AND cardinality(NEW.months) = (SELECT count(DISTINCT m.month) FROM unnest(NEW.months) AS m (month))) THEN
        v_rule := 'months_of_year';
        v_problem := format('months must be distinct months 1..12, got %s', NEW.months);
    END IF;
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
'repeats), naming the first rule broken and the value; fires only when one of those columns is '
'written. Each rule a plain test, in order: a valid row builds no message.';
