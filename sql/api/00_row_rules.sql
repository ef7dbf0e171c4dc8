-- What a row must be, as the tables' own checks and triggers hold it (the triggers and constraints
-- are the baseline migration's, sql/migrations/0100_baseline.sql; their bodies are here): the
-- zone-name and kind-name rules, a kind's row (tickq.check_kind, check_kind_offset,
-- check_kind_armed), the lease against the kinds' timeouts, a running run kept, the registry's
-- digest forgotten when what a sync writes changes, and the metrics' counts kept as runs end. The
-- registry file is judged first, with every problem named (tickq.registry_problems); these refuse a
-- row written any other way (psql, a bug), naming the first rule it breaks. An agent's row is
-- 09_agent_rules.sql's; tickq.within_limit, which the bounds' constraints call, is
-- 20_registry_values.sql's.

CREATE OR REPLACE FUNCTION tickq.each_once(
    p_values anyarray
) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT cardinality(p_values) = (SELECT count(DISTINCT u.v) FROM unnest(p_values) AS u (v))
$$;
COMMENT ON FUNCTION tickq.each_once(anyarray) IS
'True when no value of p_values stands twice (NULL elements are not counted; NULL for a NULL '
'array): the no-repeats rule of a kind''s at_times, on_days, days and months, an agent''s tools '
'(the row triggers) and every registry list (tickq.registry_no_repeats).';

CREATE OR REPLACE FUNCTION tickq.is_timezone(p_zone text, p_now timestamptz DEFAULT now())
RETURNS boolean
LANGUAGE plpgsql STABLE
-- The session's zone is set to the name to learn its canonical spelling; this clause puts it
-- back when the function returns.
SET timezone TO 'UTC'
AS $$
BEGIN
    IF p_zone IS NULL OR p_zone !~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
        OR (p_zone ~ '[+-][0-9]' AND p_zone !~ '^Etc/')
        OR p_zone IN ('Factory', 'localtime', 'posixrules') OR p_zone ~ '^(posix|right)/' THEN
        RETURN false;
    END IF;
    -- The TimeZone setting takes zone names only (no abbreviations) and shows a name as the
    -- zone database spells it.
    PERFORM set_config('timezone', p_zone, true);
    RETURN current_setting('timezone') = p_zone;
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN false;
END
$$;
COMMENT ON FUNCTION tickq.is_timezone(text, timestamptz) IS
'True when p_zone is a zone of the IANA database spelled exactly as it is there (Europe/London, '
'UTC, Etc/GMT+3); false for abbreviations (PST), other spellings (europe/london), POSIX strings '
'(UTC+3) and Factory, localtime, posixrules. p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.kind_name_ok(
    p_name text,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT p_name ~ '^[a-z0-9][a-z0-9_.-]{0,99}$'
$$;
COMMENT ON FUNCTION tickq.kind_name_ok(text, timestamptz) IS
'The kind-name rule, written once: 1-100 characters of a-z 0-9 _ . - starting with a letter or '
'digit. p_now is unused.';

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
        AND NOT tickq.each_once(NEW.at_times) THEN
        v_rule := 'at_times_distinct';
        v_problem := format('at_times must not repeat, got %s', NEW.at_times);
    ELSIF NEW.on_days IS NOT NULL
        AND NOT tickq.each_once(NEW.on_days) THEN
        v_rule := 'on_days_distinct';
        v_problem := format('on_days must not repeat, got %s', NEW.on_days);
    ELSIF NEW.days IS NOT NULL AND NOT (cardinality(NEW.days) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.days) AS d (day) WHERE d.day = 0 OR NOT tickq.within_limit('days', d.day))
        AND tickq.each_once(NEW.days)) THEN
        v_rule := 'days_of_month';
        v_problem := format('days must be distinct days 1..31 or -1..-31, got %s', NEW.days);
    ELSIF NEW.months IS NOT NULL AND NOT (cardinality(NEW.months) >= 1 AND NOT EXISTS (
        SELECT FROM unnest(NEW.months) AS m (month) WHERE NOT tickq.within_limit('months', m.month))
        AND tickq.each_once(NEW.months)) THEN
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

CREATE OR REPLACE FUNCTION tickq.check_kind_offset() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.every_offset IS NOT NULL AND (NEW.every IS NULL OR NEW.every_offset <= '0'::interval
        OR NEW.every_offset >= NEW.every) THEN
        RAISE EXCEPTION 'kind "%": every_offset must be above 0 and below every (%), got %',
            NEW.name, NEW.every, NEW.every_offset
            USING ERRCODE = 'check_violation', CONSTRAINT = 'every_offset_in_cadence',
            SCHEMA = 'tickq', TABLE = 'job_kind',
            HINT = 'The registry file is checked by tickq.sync_registry first.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_kind_offset() IS
'Trigger: refuses a job_kind row whose every_offset is not inside its cadence (0 < offset < '
'every, and only on an every cadence); fires only when every or every_offset is written.';

CREATE OR REPLACE FUNCTION tickq.check_kind_armed() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_run tickq.job_run;
BEGIN
    IF (NEW.armed_at IS NULL) AND (NEW.armed_by IS NULL) AND (NEW.armed_run_id IS NULL) THEN
        RETURN NEW;
    END IF;
    -- Checked when the arming changes, not at every sync that rewrites the same values: the
    -- arming run may since have been pruned by housekeeping.
    IF TG_OP = 'UPDATE' AND (NEW.armed_at, NEW.armed_by, NEW.armed_run_id, NEW.irreversible, NEW.command_since)
        IS NOT DISTINCT FROM (OLD.armed_at, OLD.armed_by, OLD.armed_run_id, OLD.irreversible, OLD.command_since) THEN
        RETURN NEW;
    END IF;
    IF NOT NEW.irreversible THEN
        RAISE EXCEPTION 'kind "%" is not irreversible and cannot be armed', NEW.name
            USING ERRCODE = 'check_violation', CONSTRAINT = 'armed_by_a_run', SCHEMA = 'tickq',
            TABLE = 'job_kind';
    END IF;
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = NEW.armed_run_id;
    IF NEW.armed_at IS NULL OR NEW.armed_by IS NULL OR NOT FOUND
        OR v_run.kind <> NEW.name OR v_run.run_trigger <> 'manual' OR v_run.outcome <> 'ok'
        OR v_run.run_by IS DISTINCT FROM NEW.armed_by
        OR v_run.claimed_at < NEW.command_since THEN
        RAISE EXCEPTION 'kind "%" can only be armed by a successful manual run started by a person',
            NEW.name
            USING ERRCODE = 'check_violation', CONSTRAINT = 'armed_by_a_run', SCHEMA = 'tickq',
            TABLE = 'job_kind',
            DETAIL = format('armed_run_id %s names no manual run of the current command that ended ok '
                'and was started by %s.', NEW.armed_run_id, coalesce(NEW.armed_by, 'nobody')),
            HINT = 'Run it once by hand: tickq run KIND, from a terminal.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_kind_armed() IS
'Trigger: an irreversible kind is armed only by a manual run of its current command, started by '
'the person named in armed_by, that ended ok; fires only when the arming columns are written.';

CREATE OR REPLACE FUNCTION tickq.check_lease_covers_timeouts() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_lease interval;
    v_kind text;
    v_timeout interval;
BEGIN
    SELECT s.lease INTO v_lease FROM tickq.settings AS s;
    SELECT k.name, k.timeout INTO v_kind, v_timeout
    FROM tickq.job_kind AS k
    WHERE k.retired_at IS NULL
    ORDER BY k.timeout DESC
    LIMIT 1;
    IF v_timeout > v_lease THEN
        RAISE EXCEPTION 'lease % is shorter than the timeout % of kind "%"', v_lease, v_timeout, v_kind
            USING ERRCODE = 'TQ004',
            DETAIL = 'A lease shorter than a watchdog would let a second dispatcher start a kind that is still running.',
            HINT = 'Let tickq.sync_registry set the lease (longest timeout plus lease_margin).';
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.check_lease_covers_timeouts() IS
'Constraint trigger: refuses a commit that leaves settings.lease shorter than any kind''s timeout.';

CREATE OR REPLACE FUNCTION tickq.refuse_deleting_running_runs() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_run tickq.job_run;
BEGIN
    SELECT * INTO v_run FROM gone AS g WHERE g.outcome = 'running' LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'run % of kind "%" is still running and cannot be deleted', v_run.id, v_run.kind
            USING ERRCODE = 'foreign_key_violation',
            DETAIL = 'Its kind''s lease names it until the run is reported or its lease expires.',
            HINT = 'Delete finished runs only (outcome <> ''running'').';
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.refuse_deleting_running_runs() IS
'Trigger: refuses a DELETE of job_run that would remove a running run, the one a kind''s lease '
'(job_kind.run_id) names.';

CREATE OR REPLACE FUNCTION tickq.forget_registry_digest() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE tickq.queue_registry AS q SET digest = NULL WHERE q.digest IS NOT NULL;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.forget_registry_digest() IS
'Trigger: a statement wrote what tickq.sync_registry writes (a kind''s registry columns, the '
'settings, the [agents] caps, the slot rows), so the next sync cannot be skipped: forgets '
'tickq.queue_registry.digest.';

CREATE OR REPLACE FUNCTION tickq.count_run() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_bounds double precision[] := tickq.metrics_buckets();
    v_old integer;
    v_new integer;
BEGIN
    -- Out with what an ended run counted before this write, in with what it counts now: one
    -- row per kind, the outcomes by their place in the enum.
    IF TG_OP = 'UPDATE' AND OLD.outcome <> 'running' THEN
        v_old := array_position(enum_range(NULL::tickq.outcome), OLD.outcome);
        UPDATE tickq.run_count AS c SET
            runs[v_old] = c.runs[v_old] - 1,
            merged_slots = c.merged_slots - greatest(OLD.slots - 1, 0),
            timed_runs = c.timed_runs - (OLD.duration IS NOT NULL)::integer,
            seconds = c.seconds - coalesce(extract(EPOCH FROM OLD.duration), 0),
            buckets = array(SELECT c.buckets[b.n] - coalesce((extract(EPOCH FROM OLD.duration) <= b.bound)::integer, 0)
                FROM unnest(v_bounds) WITH ORDINALITY AS b (bound, n) ORDER BY b.n),
            -- the last success, found again only when the one taken out was it
            last_ok = CASE WHEN OLD.outcome <> 'ok' OR OLD.finished_at IS DISTINCT FROM c.last_ok THEN c.last_ok
                ELSE greatest((SELECT max(r.finished_at) FROM tickq.job_run AS r
                    WHERE r.kind = OLD.kind AND r.outcome = 'ok' AND r.id <> OLD.id),
                    (SELECT t.last_finished_at FROM tickq.run_total AS t WHERE t.kind = OLD.kind AND t.outcome = 'ok'))
            END
        WHERE c.kind = OLD.kind;
    END IF;
    IF NEW.outcome <> 'running' THEN
        v_new := array_position(enum_range(NULL::tickq.outcome), NEW.outcome);
        INSERT INTO tickq.run_count AS c (kind, runs, merged_slots, timed_runs, seconds, buckets, last_ok)
        VALUES (NEW.kind,
            array(SELECT (o.n = v_new)::integer FROM generate_subscripts(enum_range(NULL::tickq.outcome), 1) AS o (n)
                ORDER BY o.n),
            greatest(NEW.slots - 1, 0), (NEW.duration IS NOT NULL)::integer, coalesce(extract(EPOCH FROM NEW.duration), 0),
            array(SELECT coalesce((extract(EPOCH FROM NEW.duration) <= b.bound)::integer, 0)
                FROM unnest(v_bounds) WITH ORDINALITY AS b (bound, n) ORDER BY b.n),
            CASE WHEN NEW.outcome = 'ok' THEN NEW.finished_at END)
        ON CONFLICT (kind) DO UPDATE SET
            runs[v_new] = c.runs[v_new] + 1,
            merged_slots = c.merged_slots + excluded.merged_slots,
            timed_runs = c.timed_runs + excluded.timed_runs,
            seconds = c.seconds + excluded.seconds,
            buckets = array(SELECT c.buckets[b.n] + excluded.buckets[b.n] FROM generate_subscripts(v_bounds, 1) AS b (n)
                ORDER BY b.n),
            last_ok = greatest(c.last_ok, excluded.last_ok);
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.count_run() IS
'Triggers run_counted and run_counted_insert: keep tickq.run_count as runs end (a run that ended '
'added, the old values of one that had ended taken out first when it changes).';
