-- Registry values: each number of the registry file judged against tickq.registry_limits (the
-- one table of bounds), the settings parsed, and the refusal that names the key the user wrote.

-- The one table of bounds. Migrations 0012-0027 each wrote a whole copy of it; from here on a
-- new bound is one row of this definition, applied with the API like every other function.
CREATE OR REPLACE FUNCTION tickq.registry_limits() RETURNS TABLE (key text, low numeric, high numeric, unit text)
LANGUAGE sql IMMUTABLE
AS $$
    -- Durations in seconds (unit 's'); counts and fractions as they are; the length of a
    -- name in characters (unit 'chars'). A key of the [agents]
    -- section is spelled as in the file ("agents.max_turns"); a tool's key stands for every
    -- tool ("agents.tools.timeout" bounds agents.tools.NAME.timeout). days and months bound the
    -- calendar fields (a day 0 is refused apart: -31..-1 count from the month's end), on.nth the
    -- n of an nth weekday ("5th mon"). A pool's key stands for every pool ("pools.slots" bounds
    -- pools.NAME.slots); a kind's weight and [agents] weight are also at most settings.slots
    -- (tickq.weight_problems). The keys agent.* bound an agent row's own fields (tickq.check_agent:
    -- `tickq agent add`, or an edit in psql), not a key of the registry file; an agent differs
    -- from a kind on purpose: every run of it is a model's turns, paid for, so it runs at most
    -- once a minute (a kind every second), with up to 48 at times, 32 tools and a 32 KiB prompt.
    VALUES
        ('slots', 1, 1000, ''),
        ('weight', 1, 1000, ''),
        ('agents.weight', 1, 1000, ''),
        ('pools.slots', 1, 1000, ''),
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
        ('ping_timeout', 1, 30, 's'),
        ('db_connect_timeout', 1, 600, 's'),
        ('db_statement_timeout', 1, 86400, 's'),
        ('db_lock_timeout', 1, 3600, 's'),
        ('every', 1, 366 * 86400, 's'),
        ('timeout', 1, 7 * 86400, 's'),
        ('catch_up', 1, 366 * 86400, 's'),
        ('days', -31, 31, ''),
        ('months', 1, 12, ''),
        ('on.nth', 1, 5, ''),
        ('agents.max_turns', 1, 6, ''),
        ('agents.timeout', 1, 600, 's'),
        ('agents.retries', 0, 10, ''),
        ('agents.deliver_timeout', 1, 300, 's'),
        ('agents.request_timeout', 1, 600, 's'),
        ('agents.http_attempts', 1, 10, ''),
        ('agents.tools.timeout', 1, 300, 's'),
        ('agent.every', 60, 366 * 86400, 's'),
        ('agent.at', 1, 48, ''),
        ('agent.tools', 0, 32, ''),
        ('agent.prompt', 1, 32768, 'chars'),
        ('project', 1, 63, 'chars')
$$;
COMMENT ON FUNCTION tickq.registry_limits() IS
'The bounds of every number in the registry (durations in seconds): the one place they are '
'written (here, not in a migration: a new bound is one more row).';

CREATE OR REPLACE FUNCTION tickq.within_limit(
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

CREATE OR REPLACE FUNCTION tickq.registry_where(
    p_kind text,
    p_key text
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    -- A key of the [agents] section or of a pool is named as the file spells it (agents.max_turns,
    -- pools.NAME.slots); any other key without a kind is one of [settings].
    SELECT 'registry: ' || CASE WHEN p_kind IS NOT NULL THEN 'kind "' || p_kind || '", '
            WHEN p_key ~ '^(agents|pools)(\.|$)' THEN '' ELSE 'settings, ' END
        || 'key "' || p_key || '": '
$$;
COMMENT ON FUNCTION tickq.registry_where(text, text) IS
'The start of a registry refusal''s message, naming the kind (or settings) and the key; '
'tickq.registry_problem takes it off again.';

CREATE OR REPLACE FUNCTION tickq.registry_error(
    p_kind text,
    p_key text,
    p_message text
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION '%', tickq.registry_where(p_kind, p_key) || p_message
        USING ERRCODE = 'TQ002', COLUMN = p_key,
        DETAIL = format('at %s', CASE WHEN p_kind IS NOT NULL THEN 'kinds.' || p_kind || '.' || p_key
            WHEN p_key ~ '^(agents|pools)(\.|$)' THEN p_key ELSE 'settings.' || p_key END),
        HINT = 'Fix the registry file; nothing was changed.';
END
$$;
COMMENT ON FUNCTION tickq.registry_error(text, text, text) IS
'Raises TQ002 naming the kind (or settings, or the agents or pools key) and the key of a refused '
'registry value.';

CREATE OR REPLACE FUNCTION tickq.registry_problem(
    p_message text,
    p_kind text,
    p_key text
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT CASE WHEN starts_with(p_message, tickq.registry_where(p_kind, p_key))
        THEN substr(p_message, length(tickq.registry_where(p_kind, p_key)) + 1) ELSE p_message END
$$;
COMMENT ON FUNCTION tickq.registry_problem(text, text, text) IS
'A registry refusal''s message (tickq.registry_error) without its "where" start: what is wrong '
'with the value.';

CREATE OR REPLACE FUNCTION tickq.registry_limit(
    p_key text
) RETURNS TABLE (low numeric, high numeric)
LANGUAGE sql IMMUTABLE
AS $$
    -- A nested key of a kind (a chain's steps[2].timeout) has the bounds of its last part; a
    -- tool's key (agents.tools.NAME.timeout) those of agents.tools.timeout, a pool's
    -- (pools.NAME.slots) those of pools.slots.
    -- The key is read once (OFFSET 0), not once for each row of the bounds: a sync of 1,000
    -- kinds asks for three bounds a kind.
    SELECT l.low, l.high
    FROM (
        SELECT CASE
            WHEN p_key ~ '^agents\.tools\.[^.]+\.' THEN 'agents.tools.' || substring(p_key FROM '[^.]*$')
            WHEN p_key ~ '^pools\.' THEN 'pools.' || substring(p_key FROM '[^.]*$')
            WHEN p_key LIKE 'agents.%' THEN p_key
            ELSE substring(p_key FROM '[^.]*$')
        END AS key
        OFFSET 0
    ) AS k
    INNER JOIN tickq.registry_limits() AS l ON l.key = k.key
$$;
COMMENT ON FUNCTION tickq.registry_limit(text) IS
'The bounds tickq.registry_limits gives the registry key p_key as the file spells it (steps[2].timeout, '
'agents.tools.search.timeout).';

CREATE OR REPLACE FUNCTION tickq.registry_number(
    p_value jsonb,
    p_kind text,
    p_key text,
    p_what text
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_low numeric;
    v_high numeric;
    v_duration boolean := p_what = 'duration';
BEGIN
    -- p_what is what the message calls the value: a duration (whole seconds, bounds in words),
    -- a whole number, or a number (fractions allowed).
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limit(p_key) AS l;
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high
        OR (p_what <> 'number' AND (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric)) THEN
        PERFORM tickq.registry_error(p_kind, p_key, format('must be a %s from %s to %s, got %s', p_what,
            CASE WHEN v_duration THEN tickq.format_duration(make_interval(secs => v_low::double precision))
                ELSE v_low::text END,
            CASE WHEN v_duration THEN tickq.format_duration(make_interval(secs => v_high::double precision))
                ELSE v_high::text END,
            CASE WHEN v_duration AND jsonb_typeof(p_value) = 'number' AND (p_value #>> '{}')::numeric >= 1
                AND (p_value #>> '{}')::numeric < 1e11
                THEN tickq.format_duration(make_interval(secs => (p_value #>> '{}')::double precision))
                WHEN v_duration THEN coalesce(p_value::text || 's', 'nothing')
                ELSE coalesce(p_value::text, 'nothing') END));
    END IF;
    RETURN p_value;
END
$$;
COMMENT ON FUNCTION tickq.registry_number(jsonb, text, text, text) IS
'p_value when it is a number within the bounds tickq.registry_limits gives p_key (whole unless '
'p_what is ''number''), or TQ002 naming kind, key and bounds: the one check behind '
'tickq.registry_seconds (p_what ''duration''), registry_count (''whole number'') and '
'registry_fraction (''number'').';

CREATE OR REPLACE FUNCTION tickq.registry_seconds(
    p_value jsonb,
    p_kind text,
    p_key text
) RETURNS interval
LANGUAGE sql
AS $$
    SELECT make_interval(secs => (tickq.registry_number(p_value, p_kind, p_key, 'duration') #>> '{}')::double precision)
$$;
COMMENT ON FUNCTION tickq.registry_seconds(jsonb, text, text) IS
'A registry duration (whole seconds within the bounds tickq.registry_limits gives p_key) as an '
'interval, or TQ002 naming kind, key and bounds.';

CREATE OR REPLACE FUNCTION tickq.registry_count(
    p_value jsonb,
    p_kind text,
    p_key text
) RETURNS integer
LANGUAGE sql
AS $$
    SELECT (tickq.registry_number(p_value, p_kind, p_key, 'whole number') #>> '{}')::integer
$$;
COMMENT ON FUNCTION tickq.registry_count(jsonb, text, text) IS
'A registry whole number within the bounds tickq.registry_limits gives p_key, or TQ002 naming '
'kind, key and bounds.';

CREATE OR REPLACE FUNCTION tickq.registry_fraction(
    p_value jsonb,
    p_kind text,
    p_key text
) RETURNS numeric
LANGUAGE sql
AS $$
    SELECT (tickq.registry_number(p_value, p_kind, p_key, 'number') #>> '{}')::numeric
$$;
COMMENT ON FUNCTION tickq.registry_fraction(jsonb, text, text) IS
'A registry number within the bounds tickq.registry_limits gives p_key, or TQ002 naming kind, '
'key and bounds.';

CREATE OR REPLACE FUNCTION tickq.registry_shape(
    p_value jsonb,
    p_kind text,
    p_key text,
    p_shape text
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
BEGIN
    -- p_shape: command (a non-empty list of non-empty strings, never left out), string, table of
    -- strings, boolean. A value left out (SQL NULL) of the last three is the caller's default; an
    -- explicit JSON null is refused.
    IF p_shape = 'command' AND (jsonb_typeof(p_value) IS DISTINCT FROM 'array' OR jsonb_array_length(p_value) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(p_value) AS e (arg)
            WHERE jsonb_typeof(e.arg) <> 'string' OR e.arg #>> '{}' = '')) THEN
        PERFORM tickq.registry_error(p_kind, p_key, 'must be a non-empty list of non-empty strings');
    ELSIF p_value IS NULL OR p_shape = 'command' THEN
        RETURN p_value;
    ELSIF p_shape = 'string' AND jsonb_typeof(p_value) <> 'string' THEN
        PERFORM tickq.registry_error(p_kind, p_key, 'must be a string');
    ELSIF p_shape = 'table of strings' AND (jsonb_typeof(p_value) <> 'object' OR EXISTS (
        SELECT FROM jsonb_each(p_value) AS e (name, value) WHERE jsonb_typeof(e.value) <> 'string'
    )) THEN
        PERFORM tickq.registry_error(p_kind, p_key, 'must be a table of strings');
    ELSIF p_shape = 'boolean' AND jsonb_typeof(p_value) <> 'boolean' THEN
        PERFORM tickq.registry_error(p_kind, p_key, format('must be true or false, got %s', p_value));
    END IF;
    RETURN p_value;
END
$$;
COMMENT ON FUNCTION tickq.registry_shape(jsonb, text, text, text) IS
'p_value when it has the shape p_shape (command: a non-empty list of non-empty strings; string; '
'table of strings; boolean) or, but for a command, is left out (NULL); else TQ002 naming kind and '
'key: one wording for a kind''s keys and a chain step''s.';

CREATE OR REPLACE FUNCTION tickq.registry_settings(
    p_settings tickq.settings
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- The settings in registry units (durations in seconds), so '30 days' and 720 hours compare
    -- equal and drift reads like the registry file.
    SELECT jsonb_build_object(
        'slots', p_settings.slots,
        'tick', extract(EPOCH FROM p_settings.tick),
        'stale_after', extract(EPOCH FROM p_settings.stale_after),
        'lease_margin', extract(EPOCH FROM p_settings.lease_margin),
        'timezone', p_settings.timezone,
        'retry_base', extract(EPOCH FROM p_settings.retry_base),
        'retry_max', extract(EPOCH FROM p_settings.retry_max),
        'capacity_margin', p_settings.capacity_margin,
        'alert_after', p_settings.alert_after,
        'housekeeping_every', extract(EPOCH FROM p_settings.housekeeping_every),
        'retention', extract(EPOCH FROM p_settings.retention),
        'keep_runs', p_settings.keep_runs
    )
$$;
COMMENT ON FUNCTION tickq.registry_settings(tickq.settings) IS
'The settings row in the registry''s terms (durations in seconds), as tickq.sync_registry compares '
'them for drift.';

CREATE OR REPLACE FUNCTION tickq.parse_settings(
    p_settings jsonb,
    p_old tickq.settings
) RETURNS tickq.settings
LANGUAGE plpgsql
AS $$
DECLARE
    v_settings jsonb := p_settings;
    v_new tickq.settings := p_old;
    v_key text;
BEGIN
    IF jsonb_typeof(p_settings) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', '"settings" must be an object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(v_settings) LOOP
        CASE v_key
            WHEN 'slots' THEN
                v_new.slots := tickq.registry_count(v_settings -> 'slots', NULL, 'slots');
            WHEN 'tick' THEN
                v_new.tick := tickq.registry_seconds(v_settings -> 'tick', NULL, 'tick');
            WHEN 'stale_after' THEN
                v_new.stale_after := tickq.registry_seconds(v_settings -> 'stale_after', NULL, 'stale_after');
            WHEN 'lease_margin' THEN
                v_new.lease_margin := tickq.registry_seconds(v_settings -> 'lease_margin', NULL, 'lease_margin');
            WHEN 'retry_base' THEN
                v_new.retry_base := tickq.registry_seconds(v_settings -> 'retry_base', NULL, 'retry_base');
            WHEN 'retry_max' THEN
                v_new.retry_max := tickq.registry_seconds(v_settings -> 'retry_max', NULL, 'retry_max');
            WHEN 'capacity_margin' THEN
                v_new.capacity_margin := tickq.registry_fraction(v_settings -> 'capacity_margin', NULL,
                    'capacity_margin');
            WHEN 'alert_timeout', 'housekeeping_timeout', 'db_connect_timeout', 'db_statement_timeout',
                'db_lock_timeout', 'ping_timeout' THEN
                -- Read by the runner alone (the alert command's watchdog, its database timeouts,
                -- how long a check-in waits)
                -- or by the built-in kind (tickq.sync_kinds); their bounds are judged here.
                PERFORM tickq.registry_seconds(v_settings -> v_key, NULL, v_key);
            WHEN 'project' THEN  -- who this project is (tickq.sync_queue_registry)
                IF tickq.project_problem(v_settings -> 'project') IS NOT NULL THEN
                    PERFORM tickq.registry_error(NULL, 'project', tickq.project_problem(v_settings -> 'project'));
                END IF;
            WHEN 'alert_after' THEN
                v_new.alert_after := tickq.registry_count(v_settings -> 'alert_after', NULL, 'alert_after');
            WHEN 'housekeeping_every' THEN
                v_new.housekeeping_every := tickq.registry_seconds(
                    v_settings -> 'housekeeping_every', NULL, 'housekeeping_every');
            WHEN 'retention' THEN
                v_new.retention := tickq.registry_seconds(v_settings -> 'retention', NULL, 'retention');
            WHEN 'keep_runs' THEN
                v_new.keep_runs := tickq.registry_count(v_settings -> 'keep_runs', NULL, 'keep_runs');
            WHEN 'timezone' THEN
                IF jsonb_typeof(v_settings -> 'timezone') <> 'string'
                    OR NOT tickq.is_timezone(v_settings ->> 'timezone') THEN
                    PERFORM tickq.registry_error(NULL, 'timezone', tickq.unknown_zone(v_settings -> 'timezone'));
                END IF;
                IF tickq.legacy_zone_problem(v_settings ->> 'timezone') IS NOT NULL THEN
                    PERFORM tickq.registry_error(NULL, 'timezone',
                        tickq.legacy_zone_problem(v_settings ->> 'timezone'));
                END IF;
                v_new.timezone := v_settings ->> 'timezone';
            ELSE
                -- Keys a later feature reads are accepted here and checked where they are used.
                NULL;
        END CASE;
    END LOOP;
    IF v_new.retry_max < v_new.retry_base THEN
        PERFORM tickq.registry_error(NULL, 'retry_max',
            format('must not be shorter than retry_base (%s), got %s', v_new.retry_base, v_new.retry_max));
    END IF;
    RETURN v_new;
END
$$;
COMMENT ON FUNCTION tickq.parse_settings(jsonb, tickq.settings) IS
'Validates the registry''s settings (durations in seconds) and returns p_old with them applied; '
'raises TQ002 naming the key and the bound. Keys it does not know are left to the runner.';
