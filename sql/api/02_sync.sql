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
        USING ERRCODE = 'TQ002',
        DETAIL = format('at %s.%s', coalesce('kinds.' || p_kind, 'settings'), p_key),
        HINT = 'Fix the registry file; nothing was changed.';
END
$$;
COMMENT ON FUNCTION tickq.registry_error(text, text, text, timestamptz) IS
'Raises TQ002 naming the kind (or settings) and the key of a refused registry value.';

CREATE OR REPLACE FUNCTION tickq.registry_seconds(
    p_value jsonb,
    p_kind text,
    p_key text,
    p_now timestamptz DEFAULT now()
) RETURNS interval
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number' OR (p_value #>> '{}')::numeric <= 0 THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a positive number of seconds, got %s', coalesce(p_value::text, 'nothing')));
    END IF;
    RETURN make_interval(secs => (p_value #>> '{}')::double precision);
END
$$;
COMMENT ON FUNCTION tickq.registry_seconds(jsonb, text, text, timestamptz) IS
'A registry duration (a positive number of seconds) as an interval, or TQ002 naming kind and key.';

CREATE OR REPLACE FUNCTION tickq.registry_count(
    p_value jsonb,
    p_minimum integer,
    p_kind text,
    p_key text,
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_value IS NULL OR jsonb_typeof(p_value) <> 'number'
        OR (p_value #>> '{}')::numeric < p_minimum
        OR (p_value #>> '{}')::numeric > 2147483647
        OR (p_value #>> '{}')::numeric <> trunc((p_value #>> '{}')::numeric) THEN
        PERFORM tickq.registry_error(p_kind, p_key,
            format('must be a whole number >= %s, got %s', p_minimum, coalesce(p_value::text, 'nothing')));
    END IF;
    RETURN (p_value #>> '{}')::integer;
END
$$;
COMMENT ON FUNCTION tickq.registry_count(jsonb, integer, text, text, timestamptz) IS
'A registry whole number of at least p_minimum (and within integer), or TQ002 naming kind and key.';

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
        'cwd', p_kind.registry -> 'cwd',
        'env', p_kind.registry -> 'env',
        'every', extract(EPOCH FROM p_kind.every)::bigint,
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
BEGIN
    IF p_name !~ '^[a-z0-9][a-z0-9_.-]{0,99}$' THEN
        PERFORM tickq.registry_error(p_name, 'name',
            'a kind name is 1-100 characters of a-z, 0-9, _ . - starting with a letter or digit');
    END IF;
    IF jsonb_typeof(p_entry) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(p_name, '*', 'a kind must be an object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_entry) LOOP
        IF NOT v_key = ANY(ARRAY['command', 'cwd', 'env', 'every', 'at', 'on', 'timezone', 'timeout',
            'priority', 'retries', 'enabled']) THEN
            PERFORM tickq.registry_error(p_name, v_key, 'unknown key');
        END IF;
    END LOOP;

    v_item := p_entry -> 'command';
    IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (arg)
            WHERE jsonb_typeof(e.arg) <> 'string' OR e.arg #>> '{}' = '') THEN
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
        'command', v_item, 'cwd', p_entry -> 'cwd', 'env', p_entry -> 'env'));

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
    ELSE
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
        END IF;
        v_kind.timezone := coalesce(p_entry ->> 'timezone', p_default_timezone);
        IF (p_entry ? 'timezone' AND jsonb_typeof(p_entry -> 'timezone') <> 'string')
            OR NOT tickq.is_timezone(v_kind.timezone) THEN
            PERFORM tickq.registry_error(p_name, 'timezone',
                format('unknown time zone %s (use an IANA name such as Europe/London)',
                    coalesce(p_entry -> 'timezone', to_jsonb(v_kind.timezone))));
        END IF;
    END IF;

    v_kind.timeout := tickq.registry_seconds(p_entry -> 'timeout', p_name, 'timeout');

    v_item := coalesce(p_entry -> 'priority', '"normal"');
    IF jsonb_typeof(v_item) <> 'string'
        OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
        PERFORM tickq.registry_error(p_name, 'priority',
            format('must be one of urgent, high, normal, low, got %s', v_item));
    END IF;
    v_kind.priority := (v_item #>> '{}')::tickq.priority;

    v_kind.retries := tickq.registry_count(coalesce(p_entry -> 'retries', '0'::jsonb), 0, p_name, 'retries');

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
    v_key text;
    -- Differences found, as a JSON array of {kind, field, stored_value, registry_value}.
    v_drift jsonb := '[]'::jsonb;
BEGIN
    IF jsonb_typeof(p_registry) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', 'the registry must be a JSON object');
    END IF;
    IF jsonb_typeof(v_settings) <> 'object' OR jsonb_typeof(v_kinds) <> 'object' THEN
        PERFORM tickq.registry_error(NULL, '*', '"settings" and "kinds" must be objects');
    END IF;

    -- Settings. The row is locked for the whole sync, so two syncs never interleave.
    SELECT * INTO STRICT v_old FROM tickq.settings FOR UPDATE;
    v_new := v_old;
    FOR v_key IN SELECT jsonb_object_keys(v_settings) LOOP
        CASE v_key
            WHEN 'slots' THEN
                v_new.slots := tickq.registry_count(v_settings -> 'slots', 1, NULL, 'slots');
            WHEN 'tick' THEN
                v_new.tick := tickq.registry_seconds(v_settings -> 'tick', NULL, 'tick');
            WHEN 'stale_after' THEN
                v_new.stale_after := tickq.registry_seconds(v_settings -> 'stale_after', NULL, 'stale_after');
            WHEN 'lease_margin' THEN
                IF jsonb_typeof(v_settings -> 'lease_margin') <> 'number'
                    OR (v_settings ->> 'lease_margin')::numeric < 0 THEN
                    PERFORM tickq.registry_error(NULL, 'lease_margin',
                        format('must be a number of seconds >= 0, got %s', v_settings -> 'lease_margin'));
                END IF;
                v_new.lease_margin := make_interval(secs => (v_settings ->> 'lease_margin')::double precision);
            WHEN 'retry_base' THEN
                v_new.retry_base := tickq.registry_seconds(v_settings -> 'retry_base', NULL, 'retry_base');
            WHEN 'retry_max' THEN
                v_new.retry_max := tickq.registry_seconds(v_settings -> 'retry_max', NULL, 'retry_max');
            WHEN 'capacity_margin' THEN
                IF jsonb_typeof(v_settings -> 'capacity_margin') <> 'number'
                    OR (v_settings ->> 'capacity_margin')::numeric < 0
                    OR (v_settings ->> 'capacity_margin')::numeric >= 1 THEN
                    PERFORM tickq.registry_error(NULL, 'capacity_margin',
                        format('must be a fraction from 0 up to (not including) 1, got %s',
                            v_settings -> 'capacity_margin'));
                END IF;
                v_new.capacity_margin := (v_settings ->> 'capacity_margin')::numeric;
            WHEN 'alert_after' THEN
                v_new.alert_after := tickq.registry_count(v_settings -> 'alert_after', 1, NULL, 'alert_after');
            WHEN 'housekeeping_every' THEN
                v_new.housekeeping_every := tickq.registry_seconds(
                    v_settings -> 'housekeeping_every', NULL, 'housekeeping_every');
            WHEN 'retention' THEN
                v_new.retention := tickq.registry_seconds(v_settings -> 'retention', NULL, 'retention');
            WHEN 'keep_runs' THEN
                v_new.keep_runs := tickq.registry_count(v_settings -> 'keep_runs', 1, NULL, 'keep_runs');
            WHEN 'timezone' THEN
                IF jsonb_typeof(v_settings -> 'timezone') <> 'string'
                    OR NOT tickq.is_timezone(v_settings ->> 'timezone') THEN
                    PERFORM tickq.registry_error(NULL, 'timezone',
                        format('unknown time zone %s (use an IANA name such as Europe/London)',
                            v_settings -> 'timezone'));
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
        v_in_entry := tickq.registry_entry(v_incoming);
        SELECT * INTO v_stored FROM tickq.job_kind AS k WHERE k.name = v_name FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO tickq.job_kind AS k (
                name, registry, every, at_times, on_days, timezone, timeout, priority, retries,
                enabled, due_at, created_at, updated_at
            ) VALUES (
                v_name, v_in_entry, v_incoming.every, v_incoming.at_times, v_incoming.on_days,
                v_incoming.timezone, v_incoming.timeout, v_incoming.priority, v_incoming.retries,
                v_incoming.enabled,
                -- New to the queue: an every cadence is due at once, a calendar one at its next slot.
                CASE WHEN v_incoming.every IS NOT NULL THEN p_now
                    ELSE tickq.next_slot(NULL, v_incoming.at_times, v_incoming.on_days,
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
        IF v_stored_entry IS DISTINCT FROM v_in_entry OR v_stored.registry IS DISTINCT FROM v_in_entry
            OR v_stored.retired_at IS NOT NULL THEN
            UPDATE tickq.job_kind AS k SET
                registry = v_in_entry,
                every = v_incoming.every,
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
                    WHEN (k.every, k.at_times, k.on_days, k.timezone)
                        IS NOT DISTINCT FROM (v_incoming.every, v_incoming.at_times, v_incoming.on_days,
                            v_incoming.timezone)
                        THEN k.due_at
                    ELSE least(k.due_at, tickq.next_slot(v_incoming.every, v_incoming.at_times,
                        v_incoming.on_days, v_incoming.timezone, p_now))
                END,
                updated_at = p_now
            WHERE k.name = v_name;
        END IF;
    END LOOP;

    -- Kinds gone from the registry: retired (disabled), never deleted, so their history stays.
    WITH retired AS (
        UPDATE tickq.job_kind AS k SET enabled = false, retired_at = p_now, updated_at = p_now
        WHERE k.retired_at IS NULL AND NOT v_kinds ? k.name
        RETURNING k.*
    )
    SELECT v_drift || coalesce(jsonb_agg(jsonb_build_object('kind', r.name, 'field', 'kind',
        'stored_value', tickq.registry_entry(r))), '[]')
    INTO v_drift
    FROM retired AS r;

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
