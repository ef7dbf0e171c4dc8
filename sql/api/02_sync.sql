-- Registry sync: the registry file wins on every field; each difference is logged as drift.

CREATE OR REPLACE FUNCTION tickq.registry_error(
    p_kind text,
    p_key text,
    p_message text,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'registry: %key "%": %',
        coalesce('kind "' || p_kind || '", ', 'settings, '), p_key, p_message
        USING ERRCODE = 'TQ002', COLUMN = p_key,
        DETAIL = format('at %s.%s', coalesce('kinds.' || p_kind, 'settings'), p_key),
        HINT = 'Fix the registry file; nothing was changed.';
END
$$;
COMMENT ON FUNCTION tickq.registry_error(text, text, text, timestamptz) IS
'Raises TQ002 naming the kind (or settings) and the key of a refused registry value.';

-- The bounds checked here are those of tickq.registry_limits (migration 0012), the one place
-- they are written; the runner's file validation checks only shape and asks for this verdict.
DROP FUNCTION IF EXISTS tickq.registry_count(jsonb, integer, text, text, timestamptz);

CREATE OR REPLACE FUNCTION tickq.registry_seconds(
    p_value jsonb,
    p_kind text,
    p_key text,
    p_now timestamptz DEFAULT now()
) RETURNS interval
LANGUAGE plpgsql
AS $$
DECLARE
    v_low numeric;
    v_high numeric;
BEGIN
    -- A nested key (a chain's steps[2].timeout) has the bounds of its last part.
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limits() AS l
    WHERE l.key = substring(p_key FROM '[^.]*$');
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high
        OR (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric) THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a duration from %s to %s, got %s',
                tickq.format_duration(make_interval(secs => v_low::double precision)),
                tickq.format_duration(make_interval(secs => v_high::double precision)),
                CASE WHEN jsonb_typeof(p_value) = 'number' AND (p_value #>> '{}')::numeric >= 1
                    AND (p_value #>> '{}')::numeric < 1e11
                    THEN tickq.format_duration(make_interval(secs => (p_value #>> '{}')::double precision))
                    ELSE coalesce(p_value::text || 's', 'nothing') END));
    END IF;
    RETURN make_interval(secs => (p_value #>> '{}')::double precision);
END
$$;
COMMENT ON FUNCTION tickq.registry_seconds(jsonb, text, text, timestamptz) IS
'A registry duration (whole seconds within the bounds tickq.registry_limits gives p_key) as an '
'interval, or TQ002 naming kind, key and bounds.';

CREATE OR REPLACE FUNCTION tickq.registry_count(
    p_value jsonb,
    p_kind text,
    p_key text,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_low numeric;
    v_high numeric;
BEGIN
    -- A nested key (a chain's steps[2].timeout) has the bounds of its last part.
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limits() AS l
    WHERE l.key = substring(p_key FROM '[^.]*$');
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high
        OR (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric) THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a whole number from %s to %s, got %s', v_low, v_high,
                coalesce(p_value::text, 'nothing')));
    END IF;
    RETURN (p_value #>> '{}')::integer;
END
$$;
COMMENT ON FUNCTION tickq.registry_count(jsonb, text, text, timestamptz) IS
'A registry whole number within the bounds tickq.registry_limits gives p_key, or TQ002 naming '
'kind, key and bounds.';

CREATE OR REPLACE FUNCTION tickq.registry_fraction(
    p_value jsonb,
    p_kind text,
    p_key text,
    p_now timestamptz DEFAULT now()
) RETURNS numeric
LANGUAGE plpgsql
AS $$
DECLARE
    v_low numeric;
    v_high numeric;
BEGIN
    -- A nested key (a chain's steps[2].timeout) has the bounds of its last part.
    SELECT l.low, l.high INTO STRICT v_low, v_high FROM tickq.registry_limits() AS l
    WHERE l.key = substring(p_key FROM '[^.]*$');
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR NOT (p_value #>> '{}')::numeric BETWEEN v_low AND v_high THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a number from %s to %s, got %s', v_low, v_high,
                coalesce(p_value::text, 'nothing')));
    END IF;
    RETURN (p_value #>> '{}')::numeric;
END
$$;
COMMENT ON FUNCTION tickq.registry_fraction(jsonb, text, text, timestamptz) IS
'A registry number within the bounds tickq.registry_limits gives p_key, or TQ002 naming kind, '
'key and bounds.';

CREATE OR REPLACE FUNCTION tickq.registry_entry(
    p_kind tickq.job_kind,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- The canonical form of a kind, built from the typed columns (plus the command, cwd and env
    -- mirror), so a stored row and an incoming entry compare field by field.
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'command', p_kind.registry -> 'command',
        'steps', p_kind.registry -> 'steps',
        'resume', p_kind.registry -> 'resume',
        'irreversible', CASE WHEN p_kind.irreversible THEN true END,
        'cwd', p_kind.registry -> 'cwd',
        'env', p_kind.registry -> 'env',
        'every', extract(EPOCH FROM p_kind.every)::bigint,
        'offset', extract(EPOCH FROM p_kind.every_offset)::bigint,
        'at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI') ORDER BY t.at_time)
            FROM unnest(p_kind.at_times) AS t (at_time)),
        'on', (SELECT jsonb_agg((ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[d.day]
            ORDER BY d.day) FROM unnest(p_kind.on_days) AS d (day)),
        'timezone', CASE WHEN p_kind.at_times IS NOT NULL THEN p_kind.timezone END,
        'timeout', extract(EPOCH FROM p_kind.timeout)::bigint,
        'priority', p_kind.priority,
        'retries', p_kind.retries,
        'enabled', p_kind.enabled OR p_kind.retired_at IS NOT NULL
    ))
$$;
COMMENT ON FUNCTION tickq.registry_entry(tickq.job_kind, timestamptz) IS
'A kind row in the canonical registry-entry form that tickq.sync_registry compares for drift.';

CREATE OR REPLACE FUNCTION tickq.registry_settings(
    p_settings tickq.settings,
    p_now timestamptz DEFAULT now()
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
COMMENT ON FUNCTION tickq.registry_settings(tickq.settings, timestamptz) IS
'The settings row in the registry''s terms (durations in seconds), as tickq.sync_registry compares '
'them for drift.';

CREATE OR REPLACE FUNCTION tickq.parse_kind(
    p_name text,
    p_entry jsonb,
    p_default_timezone text,
    p_now timestamptz DEFAULT now()
) RETURNS tickq.job_kind
LANGUAGE plpgsql
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_key text;
    v_item jsonb;
    v_day_names constant text[] := ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    v_steps_timeout interval;
BEGIN
    IF NOT tickq.kind_name_ok(p_name) THEN
        PERFORM tickq.registry_error(p_name, 'name',
            'a kind name is 1-100 characters of a-z, 0-9, _ . - starting with a letter or digit');
    END IF;
    IF p_name LIKE 'agent.%' THEN
        PERFORM tickq.registry_error(p_name, 'name',
            'names starting with "agent." belong to user-built agents (tickq agent add)');
    END IF;
    IF jsonb_typeof(p_entry) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(p_name, '*', 'a kind must be an object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_entry) LOOP
        IF NOT v_key = ANY(ARRAY['command', 'cwd', 'env', 'every', 'offset', 'at', 'on', 'timezone',
            'timeout', 'priority', 'retries', 'enabled', 'steps', 'resume', 'irreversible']) THEN
            PERFORM tickq.registry_error(p_name, v_key, 'unknown key');
        END IF;
    END LOOP;

    v_item := p_entry -> 'command';
    -- A chain (steps, sql/api/08_chain.sql) has no command of its own.
    v_steps_timeout := tickq.parse_chain(p_name, p_entry);
    IF v_steps_timeout IS NULL AND (jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (arg)
            WHERE jsonb_typeof(e.arg) <> 'string' OR e.arg #>> '{}' = '')) THEN
        PERFORM tickq.registry_error(p_name, 'command', 'must be a non-empty list of non-empty strings');
    END IF;
    IF p_entry ? 'cwd' AND jsonb_typeof(p_entry -> 'cwd') <> 'string' THEN
        PERFORM tickq.registry_error(p_name, 'cwd', 'must be a string');
    END IF;
    IF p_entry ? 'env' AND (jsonb_typeof(p_entry -> 'env') <> 'object' OR EXISTS (
        SELECT FROM jsonb_each(p_entry -> 'env') AS e (name, value) WHERE jsonb_typeof(e.value) <> 'string'
    )) THEN
        PERFORM tickq.registry_error(p_name, 'env', 'must be a table of strings');
    END IF;
    v_kind.name := p_name;
    v_kind.registry := jsonb_strip_nulls(jsonb_build_object(
        'command', v_item, 'cwd', p_entry -> 'cwd', 'env', tickq.env_digests(p_name, p_entry -> 'env'),
        -- a step's env is kept as digests too (its values are as secret as a kind's)
        'steps', (SELECT jsonb_agg(CASE WHEN e.step ? 'env' THEN jsonb_set(e.step, '{env}',
                coalesce(tickq.env_digests(p_name || '.' || (e.step ->> 'name'), e.step -> 'env'),
                    e.step -> 'env'))
                ELSE e.step END ORDER BY e.n)
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_entry -> 'steps') = 'array'
                THEN p_entry -> 'steps' END) WITH ORDINALITY AS e (step, n)),
        'resume', CASE WHEN p_entry -> 'resume' = 'true' THEN true END));
    v_kind.irreversible := coalesce(p_entry -> 'irreversible', 'false') = 'true';
    IF p_entry ? 'irreversible' AND jsonb_typeof(p_entry -> 'irreversible') <> 'boolean' THEN
        PERFORM tickq.registry_error(p_name, 'irreversible',
            format('must be true or false, got %s', p_entry -> 'irreversible'));
    END IF;

    IF (p_entry ? 'every') = (p_entry ? 'at') THEN
        PERFORM tickq.registry_error(p_name, 'every', 'give exactly one of "every" or "at"');
    END IF;
    IF p_entry ? 'every' THEN
        IF p_entry ? 'on' OR p_entry ? 'timezone' THEN
            PERFORM tickq.registry_error(p_name, CASE WHEN p_entry ? 'on' THEN 'on' ELSE 'timezone' END,
                'only a calendar schedule ("at") takes this key');
        END IF;
        v_kind.every := tickq.registry_seconds(p_entry -> 'every', p_name, 'every');
        v_kind.timezone := 'UTC';
        -- The slots of the cadence shifted by the offset; 0 is no shift, stored as NULL.
        IF p_entry ? 'offset' THEN
            IF jsonb_typeof(p_entry -> 'offset') <> 'number' OR (p_entry ->> 'offset')::numeric < 0
                OR make_interval(secs => (p_entry ->> 'offset')::double precision) >= v_kind.every THEN
                PERFORM tickq.registry_error(p_name, 'offset',
                    format('must be shorter than every (%s), got %s',
                        tickq.format_duration(v_kind.every),
                        CASE WHEN jsonb_typeof(p_entry -> 'offset') = 'number'
                            AND (p_entry ->> 'offset')::numeric >= 0
                            THEN tickq.format_duration(make_interval(
                                secs => (p_entry ->> 'offset')::double precision))
                            ELSE p_entry ->> 'offset' END));
            END IF;
            v_kind.every_offset := nullif(make_interval(secs => (p_entry ->> 'offset')::double precision),
                '0'::interval);
        END IF;
    ELSE
        IF p_entry ? 'offset' THEN
            PERFORM tickq.registry_error(p_name, 'offset', 'only an every cadence takes this key');
        END IF;
        v_item := p_entry -> 'at';
        IF jsonb_typeof(v_item) = 'string' THEN
            v_item := jsonb_build_array(v_item);
        END IF;
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t)
                WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$') THEN
            PERFORM tickq.registry_error(p_name, 'at',
                format('must be a time of day "HH:MM" (00:00-23:59) or a list of them, got %s', v_item));
        END IF;
        SELECT array_agg(DISTINCT (e.t #>> '{}')::time ORDER BY (e.t #>> '{}')::time) INTO v_kind.at_times
        FROM jsonb_array_elements(v_item) AS e (t);
        IF cardinality(v_kind.at_times) <> jsonb_array_length(v_item) THEN
            PERFORM tickq.registry_error(p_name, 'at', format('times must not repeat, got %s', v_item));
        END IF;
        IF p_entry ? 'on' THEN
            v_item := p_entry -> 'on';
            IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
                OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (d)
                    WHERE NOT (e.d #>> '{}') = ANY(v_day_names) OR jsonb_typeof(e.d) <> 'string') THEN
                PERFORM tickq.registry_error(p_name, 'on',
                    format('must be a list of weekdays (mon tue wed thu fri sat sun), got %s', v_item));
            END IF;
            SELECT array_agg(DISTINCT array_position(v_day_names, e.d #>> '{}')::smallint) INTO v_kind.on_days
            FROM jsonb_array_elements(v_item) AS e (d);
            IF cardinality(v_kind.on_days) <> jsonb_array_length(v_item) THEN
                PERFORM tickq.registry_error(p_name, 'on', format('days must not repeat, got %s', v_item));
            END IF;
        END IF;
        v_kind.timezone := coalesce(p_entry ->> 'timezone', p_default_timezone);
        IF (p_entry ? 'timezone' AND jsonb_typeof(p_entry -> 'timezone') <> 'string')
            OR NOT tickq.is_timezone(v_kind.timezone) THEN
            PERFORM tickq.registry_error(p_name, 'timezone',
                format('unknown time zone %s (use an IANA name spelled as in the zone database, '
                    'such as Europe/London)', coalesce(p_entry -> 'timezone', to_jsonb(v_kind.timezone))));
        END IF;
    END IF;

    IF v_steps_timeout IS NOT NULL AND NOT p_entry ? 'timeout' THEN
        v_kind.timeout := v_steps_timeout;
    ELSE
        v_kind.timeout := tickq.registry_seconds(p_entry -> 'timeout', p_name, 'timeout');
    END IF;
    IF v_kind.timeout < v_steps_timeout THEN
        PERFORM tickq.registry_error(p_name, 'timeout',
            format('a chain''s timeout must not be shorter than the sum of its steps'' (%s), got %s',
                v_steps_timeout, v_kind.timeout));
    END IF;

    v_item := coalesce(p_entry -> 'priority', '"normal"');
    IF jsonb_typeof(v_item) <> 'string'
        OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
        PERFORM tickq.registry_error(p_name, 'priority',
            format('must be one of urgent, high, normal, low, got %s', v_item));
    END IF;
    v_kind.priority := (v_item #>> '{}')::tickq.priority;

    v_kind.retries := tickq.registry_count(coalesce(p_entry -> 'retries', '0'::jsonb), p_name, 'retries');

    v_item := coalesce(p_entry -> 'enabled', 'true');
    IF jsonb_typeof(v_item) <> 'boolean' THEN
        PERFORM tickq.registry_error(p_name, 'enabled', format('must be true or false, got %s', v_item));
    END IF;
    v_kind.enabled := (v_item #>> '{}')::boolean;
    RETURN v_kind;
END
$$;
COMMENT ON FUNCTION tickq.parse_kind(text, jsonb, text, timestamptz) IS
'Validates one registry entry and returns it as a job_kind row (schedule, timeout, priority, '
'retries, enabled, and the command/cwd/env mirror); raises TQ002 naming the kind and key.';

CREATE OR REPLACE FUNCTION tickq.parse_settings(
    p_settings jsonb,
    p_old tickq.settings,
    p_now timestamptz DEFAULT now()
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
            WHEN 'alert_timeout' THEN
                -- Read by the runner only (the alert command's watchdog); its bounds live here.
                PERFORM tickq.registry_seconds(v_settings -> 'alert_timeout', NULL, 'alert_timeout');
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
                    PERFORM tickq.registry_error(NULL, 'timezone',
                        format('unknown time zone %s (use an IANA name spelled as in the zone database, '
                            'such as Europe/London)', v_settings -> 'timezone'));
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
COMMENT ON FUNCTION tickq.parse_settings(jsonb, tickq.settings, timestamptz) IS
'Validates the registry''s settings (durations in seconds) and returns p_old with them applied; '
'raises TQ002 naming the key and the bound. Keys it does not know are left to the runner.';

CREATE OR REPLACE FUNCTION tickq.sync_registry(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, field text, stored_value jsonb, registry_value jsonb)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings jsonb := coalesce(p_registry -> 'settings', '{}'::jsonb);
    v_kinds jsonb := coalesce(p_registry -> 'kinds', '{}'::jsonb);
    v_old tickq.settings;
    v_new tickq.settings;
    v_name text;
    v_incoming tickq.job_kind;
    v_stored tickq.job_kind;
    v_in_entry jsonb;
    v_stored_entry jsonb;
    v_new_command boolean;
    -- Differences found, as a JSON array of {kind, field, stored_value, registry_value}.
    v_drift jsonb := '[]'::jsonb;
    v_dispatcher text := p_registry ->> 'dispatcher';
    v_fingerprint text;
    v_own_lease interval := '0'::interval;
    v_other tickq.dispatcher;
BEGIN
    IF jsonb_typeof(p_registry) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', 'the registry must be a JSON object');
    END IF;
    IF jsonb_typeof(v_settings) <> 'object' OR jsonb_typeof(v_kinds) <> 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', '"settings" and "kinds" must be objects');
    END IF;

    -- Settings. The row is locked for the whole sync, so two syncs never interleave.
    SELECT * INTO STRICT v_old FROM tickq.settings FOR UPDATE;
    v_new := tickq.parse_settings(v_settings, v_old);
    -- Before the first sync (no kind at all, not even the built-in one) the stored settings are
    -- the defaults, which no registry wrote: the registry's settings replace them without drift.
    IF EXISTS (SELECT FROM tickq.job_kind) THEN
        v_drift := v_drift || coalesce((
        SELECT jsonb_agg(jsonb_build_object('field', 'settings.' || o.key, 'stored_value', o.value,
            'registry_value', n.value))
        FROM jsonb_each(tickq.registry_settings(v_old)) AS o (key, value)
        INNER JOIN jsonb_each(tickq.registry_settings(v_new)) AS n (key, value) ON o.key = n.key
        WHERE o.value IS DISTINCT FROM n.value), '[]');
    END IF;

    -- The built-in housekeeping kind goes through the same claim path as any other kind, so it
    -- counts in capacity. Its name is reserved.
    IF EXISTS (SELECT FROM jsonb_object_keys(v_kinds) AS n (name) WHERE n.name LIKE 'tickq.%') THEN
        PERFORM tickq.registry_error(
            (SELECT n.name FROM jsonb_object_keys(v_kinds) AS n (name) WHERE n.name LIKE 'tickq.%' LIMIT 1),
            'name', 'names starting with "tickq." are reserved for built-in kinds');
    END IF;
    v_kinds := v_kinds || jsonb_build_object('tickq.housekeeping', jsonb_build_object(
        'command', jsonb_build_array('tickq', 'housekeeping'),
        'every', extract(EPOCH FROM v_new.housekeeping_every),
        -- Its timeout counts in the lease like any kind's: the registry may shorten it, and with
        -- it the time a dead dispatcher's runs stay leased.
        'timeout', coalesce(v_settings -> 'housekeeping_timeout', '60'::jsonb),
        'priority', 'normal'));

    -- Kinds in the registry: insert new ones, overwrite drifted ones, bring retired ones back.
    FOR v_name IN SELECT jsonb_object_keys(v_kinds) ORDER BY 1 LOOP
        v_incoming := tickq.parse_kind(v_name, v_kinds -> v_name, v_new.timezone);
        v_own_lease := greatest(v_own_lease, v_incoming.timeout);
        v_in_entry := tickq.registry_entry(v_incoming);
        SELECT * INTO v_stored FROM tickq.job_kind AS k WHERE k.name = v_name FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO tickq.job_kind AS k (
                name, registry, every, every_offset, at_times, on_days, timezone, timeout, priority,
                retries, enabled, irreversible, command_since, due_at, created_at, updated_at
            ) VALUES (
                v_name, v_in_entry, v_incoming.every, v_incoming.every_offset, v_incoming.at_times,
                v_incoming.on_days,
                v_incoming.timezone, v_incoming.timeout, v_incoming.priority, v_incoming.retries,
                v_incoming.enabled, v_incoming.irreversible, p_now,
                -- New to the queue: an every cadence is due at once, a calendar one at its next slot.
                CASE WHEN v_incoming.every IS NOT NULL THEN p_now
                    ELSE tickq.next_slot(NULL, NULL, v_incoming.at_times, v_incoming.on_days,
                        v_incoming.timezone, p_now) END,
                p_now, p_now
            );
            CONTINUE;
        END IF;
        v_stored_entry := tickq.registry_entry(v_stored);
        IF v_stored.retired_at IS NOT NULL THEN
            v_drift := v_drift || jsonb_build_object('kind', v_name, 'field', 'kind',
                'registry_value', v_in_entry);
        ELSE
            v_drift := v_drift || coalesce((
                SELECT jsonb_agg(jsonb_build_object('kind', v_name, 'field', f.key,
                    'stored_value', v_stored_entry -> f.key, 'registry_value', v_in_entry -> f.key))
                FROM (SELECT jsonb_object_keys(v_stored_entry) UNION SELECT jsonb_object_keys(v_in_entry))
                    AS f (key)
                WHERE (v_stored_entry -> f.key) IS DISTINCT FROM (v_in_entry -> f.key)), '[]');
            -- The mirror column itself may have been edited: the registry wins there too.
            IF v_stored.registry IS DISTINCT FROM v_in_entry AND v_stored_entry = v_in_entry THEN
                v_drift := v_drift || jsonb_build_object('kind', v_name, 'field', 'registry',
                    'stored_value', v_stored.registry, 'registry_value', v_in_entry);
            END IF;
        END IF;
        -- A new command (or steps, cwd, env) needs a new first run by hand: disarmed, and logged.
        v_new_command := tickq.command_changed(v_stored, v_incoming);
        IF v_new_command AND v_stored.armed_at IS NOT NULL THEN
            v_drift := v_drift || jsonb_build_object('kind', v_name, 'field', 'armed',
                'stored_value', jsonb_build_object('armed_at', v_stored.armed_at,
                    'armed_by', v_stored.armed_by, 'run_id', v_stored.armed_run_id));
        END IF;
        IF v_stored_entry IS DISTINCT FROM v_in_entry OR v_stored.registry IS DISTINCT FROM v_in_entry
            OR v_stored.retired_at IS NOT NULL THEN
            UPDATE tickq.job_kind AS k SET
                irreversible = v_incoming.irreversible,
                command_since = CASE WHEN v_new_command THEN p_now ELSE k.command_since END,
                armed_at = CASE WHEN v_new_command THEN NULL ELSE k.armed_at END,
                armed_by = CASE WHEN v_new_command THEN NULL ELSE k.armed_by END,
                armed_run_id = CASE WHEN v_new_command THEN NULL ELSE k.armed_run_id END,
                registry = v_in_entry,
                every = v_incoming.every,
                every_offset = v_incoming.every_offset,
                at_times = v_incoming.at_times,
                on_days = v_incoming.on_days,
                timezone = v_incoming.timezone,
                timeout = v_incoming.timeout,
                priority = v_incoming.priority,
                retries = v_incoming.retries,
                enabled = v_incoming.enabled,
                retired_at = NULL,
                -- A changed schedule takes effect at once, unless the kind is already due sooner.
                due_at = CASE
                    WHEN (k.every, k.every_offset, k.at_times, k.on_days, k.timezone)
                        IS NOT DISTINCT FROM (v_incoming.every, v_incoming.every_offset, v_incoming.at_times,
                            v_incoming.on_days, v_incoming.timezone)
                        THEN k.due_at
                    ELSE least(k.due_at, tickq.next_slot(v_incoming.every, v_incoming.every_offset,
                        v_incoming.at_times, v_incoming.on_days, v_incoming.timezone, p_now))
                END,
                updated_at = p_now
            WHERE k.name = v_name;
        END IF;
    END LOOP;

    -- Kinds gone from the registry: retired (disabled), never deleted, so their history stays.
    WITH retired AS (
        UPDATE tickq.job_kind AS k SET enabled = false, retired_at = p_now, updated_at = p_now
        -- Agent kinds belong to tickq.agent rows, not to the registry file.
        WHERE k.retired_at IS NULL AND NOT v_kinds ? k.name AND k.name NOT LIKE 'agent.%'
        RETURNING k.*
    )
    SELECT v_drift || coalesce(jsonb_agg(jsonb_build_object('kind', r.name, 'field', 'kind',
        'stored_value', tickq.registry_entry(r))), '[]')
    INTO v_drift
    FROM retired AS r;

    -- The [agents] section: the agents' lane and caps, before the lease, which covers them too.
    PERFORM tickq.sync_agents(p_registry -> 'agents', p_now);

    -- The lease: the longest timeout plus the margin (checked again at commit by a trigger), and
    -- no floor of its own: the margin is the registry's allowance for a late report, and the
    -- lease is how long a dead dispatcher's kinds wait before another dispatcher may run them.
    v_new.lease := coalesce((SELECT max(k.timeout) FROM tickq.job_kind AS k WHERE k.retired_at IS NULL),
        '0'::interval) + v_new.lease_margin;
    IF to_jsonb(v_new) - 'updated_at' IS DISTINCT FROM to_jsonb(v_old) - 'updated_at' THEN
        UPDATE tickq.settings AS s SET
            slots = v_new.slots, tick = v_new.tick, stale_after = v_new.stale_after,
            lease_margin = v_new.lease_margin, lease = v_new.lease, timezone = v_new.timezone,
            retry_base = v_new.retry_base, retry_max = v_new.retry_max,
            capacity_margin = v_new.capacity_margin, alert_after = v_new.alert_after,
            housekeeping_every = v_new.housekeeping_every, retention = v_new.retention,
            keep_runs = v_new.keep_runs,
            updated_at = p_now;
    END IF;

    -- The dispatcher that sent this registry (the "dispatcher" key; a script's JSON may leave it
    -- out): its claims are leased at least its own longest timeout plus its own margin, and
    -- another host's different registry synced within the last three ticks is reported as one
    -- drift row (field "registry") naming both, where the settings and kinds flap between them.
    IF v_dispatcher IS NOT NULL THEN
        v_fingerprint := encode(sha256(convert_to((p_registry - 'dispatcher')::text, 'UTF8')), 'hex');
        SELECT d.* INTO v_other FROM tickq.dispatcher AS d
        WHERE d.synced_at > p_now - 3 * v_new.tick AND d.fingerprint <> v_fingerprint
            AND regexp_replace(d.name, ':[0-9]+$', '') <> regexp_replace(v_dispatcher, ':[0-9]+$', '')
        ORDER BY d.synced_at DESC
        LIMIT 1;
        IF FOUND THEN
            v_drift := v_drift || jsonb_build_object('field', 'registry',
                'stored_value', jsonb_build_object('dispatcher', v_other.name,
                    'fingerprint', v_other.fingerprint, 'synced_at', v_other.synced_at),
                'registry_value', jsonb_build_object('dispatcher', v_dispatcher, 'fingerprint', v_fingerprint));
        END IF;
        INSERT INTO tickq.dispatcher AS d (name, fingerprint, lease, synced_at)
        VALUES (v_dispatcher, v_fingerprint, v_own_lease + v_new.lease_margin, p_now)
        ON CONFLICT (name) DO UPDATE SET
            fingerprint = excluded.fingerprint, lease = excluded.lease, synced_at = excluded.synced_at;
        -- Older than any run of any registry could last (a 7-day timeout plus a 1-day margin).
        DELETE FROM tickq.dispatcher AS d WHERE d.synced_at < p_now - interval '8 days';
    END IF;

    -- One row per slot: add missing ones; drop free ones past the limit (a busy one past the
    -- limit is left to finish, claims use only slots up to the limit, and a later sync drops it).
    INSERT INTO tickq.slot (n)
    SELECT g.n FROM generate_series(1, v_new.slots) AS g (n)
    ON CONFLICT (n) DO NOTHING;
    DELETE FROM tickq.slot AS sl WHERE sl.n > v_new.slots AND sl.run_id IS NULL;

    RETURN QUERY
    INSERT INTO tickq.drift AS t (kind, field, stored_value, registry_value, detected_at)
    SELECT d.kind, d.field, d.stored_value, d.registry_value, p_now
    FROM jsonb_to_recordset(v_drift) AS d (kind text, field text, stored_value jsonb, registry_value jsonb)
    RETURNING t.kind, t.field, t.stored_value, t.registry_value;
END
$$;
COMMENT ON FUNCTION tickq.sync_registry(jsonb, timestamptz) IS
'Makes the queue match the registry (JSON, durations in seconds): upserts kinds, retires kinds '
'that left it, sets the settings and the lease (longest timeout + lease_margin). The registry '
'wins on every field; each difference found is recorded in tickq.drift and returned.';

CREATE OR REPLACE FUNCTION tickq.registry_problems(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, key text, problem text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_settings jsonb := coalesce(p_registry -> 'settings', '{}'::jsonb);
    v_kinds jsonb := coalesce(p_registry -> 'kinds', '{}'::jsonb);
    v_defaults tickq.settings;
    v_loose tickq.settings;
    v_zone text;
    v_key text;
    v_name text;
    v_message text;
    v_settings_ok boolean := true;
BEGIN
    -- The rules of tickq.sync_registry (the same functions), each setting and each kind checked
    -- on its own, so that one answer lists every problem where sync_registry stops at the first.
    -- Changes nothing. A problem's text is registry_error's message less its "where" prefix.
    IF jsonb_typeof(p_registry) IS DISTINCT FROM 'object' OR jsonb_typeof(v_settings) <> 'object'
        OR jsonb_typeof(v_kinds) <> 'object' THEN
        RETURN QUERY SELECT NULL::text, '*'::text,
            'the registry must be a JSON object whose "settings" and "kinds" are objects'::text;
        RETURN;
    END IF;
    SELECT * INTO STRICT v_defaults FROM tickq.settings;
    v_zone := v_defaults.timezone;
    -- Each setting alone, against a backoff range as wide as the bounds allow, so that the rule
    -- between retry_base and retry_max is not charged to one of them (it is checked below).
    v_loose := v_defaults;
    v_loose.retry_base := make_interval(secs => (SELECT l.low FROM tickq.registry_limits() AS l
        WHERE l.key = 'retry_base')::double precision);
    v_loose.retry_max := make_interval(secs => (SELECT l.high FROM tickq.registry_limits() AS l
        WHERE l.key = 'retry_max')::double precision);
    FOR v_key IN SELECT jsonb_object_keys(v_settings) ORDER BY 1 LOOP
        BEGIN
            PERFORM tickq.parse_settings(jsonb_build_object(v_key, v_settings -> v_key), v_loose);
            IF v_key = 'timezone' THEN
                v_zone := v_settings ->> 'timezone';
            END IF;
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            v_settings_ok := false;
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT;
            RETURN QUERY SELECT NULL::text, v_key,
                substr(v_message, length(format('registry: settings, key "%s": ', v_key)) + 1);
        END;
    END LOOP;
    -- The one rule between settings (retry_max >= retry_base), once each is fine on its own.
    IF v_settings_ok THEN
        BEGIN
            PERFORM tickq.parse_settings(v_settings, v_defaults);
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
            RETURN QUERY SELECT NULL::text, v_key,
                substr(v_message, length(format('registry: settings, key "%s": ', v_key)) + 1);
        END;
    END IF;
    FOR v_name IN SELECT jsonb_object_keys(v_kinds) ORDER BY 1 LOOP
        IF v_name LIKE 'tickq.%' THEN
            RETURN QUERY SELECT v_name, 'name'::text,
                'names starting with "tickq." are reserved for built-in kinds'::text;
            CONTINUE;
        END IF;
        BEGIN
            PERFORM tickq.parse_kind(v_name, v_kinds -> v_name, v_zone);
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
            RETURN QUERY SELECT v_name, v_key,
                substr(v_message, length(format('registry: kind "%s", key "%s": ', v_name, v_key)) + 1);
        END;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.registry_problems(jsonb, timestamptz) IS
'Every value tickq.sync_registry would refuse in p_registry, one row per setting or kind at '
'fault (kind NULL for a setting), by the same rules; changes nothing.';
