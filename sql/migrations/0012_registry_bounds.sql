-- 0012: every number of the registry has bounds that make sense, and each value rule has one
-- owner in the database.
--
-- tickq.registry_limits is the one table of bounds: tickq.sync_registry refuses a value outside
-- it naming the kind, the key and the bound, and the settings constraints and the job_kind
-- trigger below hold the same bounds for a row written behind the registry's back. Without
-- them, slots = 2147483647 made a sync write gigabytes of slot rows, and retries = 2^31-1 let
-- a backoff grow past what an interval holds. The kind-name pattern and the time-zone rule are
-- functions here, used by the trigger and by the sync alike. The runner's file validation
-- checks only the file's shape and asks the database for its verdict on values.

CREATE FUNCTION tickq.registry_limits(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (key text, low numeric, high numeric, unit text)
LANGUAGE sql IMMUTABLE
AS $$
    -- Durations in seconds (unit 's'); counts and fractions as they are.
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
        ('retention', 1, 3650 * 86400, 's'),
        ('alert_timeout', 1, 3600, 's'),
        ('every', 1, 366 * 86400, 's'),
        ('timeout', 1, 7 * 86400, 's')
$$;
COMMENT ON FUNCTION tickq.registry_limits(timestamptz) IS
'The bounds of every number in the registry (durations in seconds): the one place they are '
'written. p_now is unused.';

CREATE FUNCTION tickq.within_limit(
    p_key text,
    p_value numeric,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT EXISTS (SELECT FROM tickq.registry_limits() AS l
        WHERE l.key = p_key AND p_value BETWEEN l.low AND l.high)
$$;
COMMENT ON FUNCTION tickq.within_limit(text, numeric, timestamptz) IS
'True when p_value lies within the bounds tickq.registry_limits gives p_key. p_now is unused.';

CREATE FUNCTION tickq.kind_name_ok(
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

-- The zone rule: a name of the IANA database spelled exactly as it is there (case matters), so
-- both the registry file and the JSON a script sends take the same names. PostgreSQL alone also
-- takes abbreviations (PST, IST: ambiguous, and without daylight saving), any spelling of a
-- name's case, POSIX strings such as 'UTC+3' (sign reversed), and the files of the zone folder
-- that are not zones (Factory, localtime, posixrules, the posix/ and right/ copies).
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
        (2, 'one_schedule', (NEW.every IS NULL) = (NEW.at_times IS NULL),
            'exactly one of every and at_times must be set'),
        (3, 'every_bounded', NEW.every IS NOT NULL AND NOT tickq.within_limit('every', extract(EPOCH FROM NEW.every)),
            format('every must be from %s to %s seconds, got %s', (SELECT l.low FROM tickq.registry_limits() AS l
                WHERE l.key = 'every'), (SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'every'), NEW.every)),
        (4, 'at_times_not_empty', cardinality(NEW.at_times) = 0, 'at_times must not be empty'),
        (5, 'on_days_need_at', NEW.on_days IS NOT NULL AND NEW.at_times IS NULL,
            'on_days needs at_times'),
        (6, 'on_days_iso', NOT (cardinality(NEW.on_days) >= 1
            AND NEW.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]),
            format('on_days must be ISO weekdays 1-7, got %s', NEW.on_days)),
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
            format('on_days must not repeat, got %s', NEW.on_days))
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

-- NOT VALID: a queue whose settings are already out of bounds still migrates; its next sync
-- refuses the registry that holds them, naming the bound.
ALTER TABLE tickq.settings
ADD CONSTRAINT slots_bounded CHECK (tickq.within_limit('slots', slots)) NOT VALID,
ADD CONSTRAINT keep_runs_bounded CHECK (tickq.within_limit('keep_runs', keep_runs)) NOT VALID,
ADD CONSTRAINT alert_after_bounded CHECK (tickq.within_limit('alert_after', alert_after)) NOT VALID,
ADD CONSTRAINT capacity_margin_bounded
CHECK (tickq.within_limit('capacity_margin', capacity_margin)) NOT VALID,
ADD CONSTRAINT tick_bounded CHECK (tickq.within_limit('tick', extract(EPOCH FROM tick))) NOT VALID,
ADD CONSTRAINT stale_after_bounded
CHECK (tickq.within_limit('stale_after', extract(EPOCH FROM stale_after))) NOT VALID,
ADD CONSTRAINT lease_margin_bounded
CHECK (tickq.within_limit('lease_margin', extract(EPOCH FROM lease_margin))) NOT VALID,
ADD CONSTRAINT retry_base_bounded
CHECK (tickq.within_limit('retry_base', extract(EPOCH FROM retry_base))) NOT VALID,
ADD CONSTRAINT retry_max_bounded
CHECK (tickq.within_limit('retry_max', extract(EPOCH FROM retry_max))) NOT VALID,
ADD CONSTRAINT housekeeping_every_bounded
CHECK (tickq.within_limit('housekeeping_every', extract(EPOCH FROM housekeeping_every))) NOT VALID,
ADD CONSTRAINT retention_bounded
CHECK (tickq.within_limit('retention', extract(EPOCH FROM retention))) NOT VALID;

-- Each dispatcher's last sync: the registry it holds (a fingerprint) and the lease its own
-- registry needs (its longest timeout plus its lease_margin). Dispatchers whose registry files
-- differ disagree on timeouts; a claim's lease covers the claimer's own watchdog, so a kind is
-- never claimed again while the first copy may still run, and a sync that finds another host's
-- different registry says so.
CREATE TABLE tickq.dispatcher (
    name text PRIMARY KEY,
    fingerprint text NOT NULL,
    lease interval NOT NULL CONSTRAINT dispatcher_lease_positive CHECK (lease > '0'::interval),
    synced_at timestamptz NOT NULL
);
COMMENT ON TABLE tickq.dispatcher IS
'One row per dispatcher name (host:pid) that synced a registry lately: fingerprint (sha256 of '
'the registry JSON it sent), lease (its longest timeout plus its lease_margin: claims it makes '
'are leased at least this long), synced_at. Written by tickq.sync_registry, which also prunes it.';
CREATE INDEX dispatcher_synced_at ON tickq.dispatcher (synced_at);
