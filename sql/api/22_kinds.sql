-- Registry kinds: one entry of the file parsed into a job_kind row, its canonical form for drift,
-- and the sync of every kind (new, changed, retired) with its drift classified.

CREATE OR REPLACE FUNCTION tickq.registry_entry(
    p_kind tickq.job_kind
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
        'ping_url', p_kind.registry -> 'ping_url',
        'first_run', p_kind.registry -> 'first_run',
        'catch_up', extract(EPOCH FROM p_kind.catch_up)::bigint,
        'timeout', extract(EPOCH FROM p_kind.timeout)::bigint,
        'priority', p_kind.priority,
        'retries', p_kind.retries,
        'enabled', p_kind.enabled OR p_kind.retired_at IS NOT NULL,
        -- only when not the default, so a kind that names neither reads as before they existed
        'weight', CASE WHEN p_kind.weight <> 1 THEN p_kind.weight END,
        'pools', CASE WHEN cardinality(p_kind.pools) > 0 THEN to_jsonb(p_kind.pools) END
    )) || tickq.schedule_entry(tickq.schedule_of(p_kind))
$$;
COMMENT ON FUNCTION tickq.registry_entry(tickq.job_kind) IS
'A kind row in the canonical registry-entry form that tickq.sync_registry compares for drift.';

CREATE OR REPLACE FUNCTION tickq.parse_kind(
    p_name text,
    p_entry jsonb,
    p_default_timezone text
) RETURNS tickq.job_kind
LANGUAGE plpgsql
AS $$
DECLARE
    v_kind tickq.job_kind;
    v_key text;
    v_item jsonb;
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
        IF NOT v_key = ANY(ARRAY['command', 'cwd', 'env', 'every', 'offset', 'at', 'on', 'days', 'months', 'cron',
            'timezone',
            'timeout', 'priority', 'retries', 'enabled', 'steps', 'resume', 'irreversible', 'ping_url',
            'first_run', 'weight', 'pools', 'catch_up']) THEN
            PERFORM tickq.registry_error(p_name, v_key, 'unknown key');
        END IF;
    END LOOP;

    v_item := p_entry -> 'command';
    -- A chain (steps, sql/api/08_chain.sql) has no command of its own.
    v_steps_timeout := tickq.parse_chain(p_name, p_entry);
    IF v_steps_timeout IS NULL THEN
        PERFORM tickq.registry_shape(v_item, p_name, 'command', 'command');
    END IF;
    PERFORM tickq.registry_shape(p_entry -> 'cwd', p_name, 'cwd', 'string');
    PERFORM tickq.registry_shape(p_entry -> 'env', p_name, 'env', 'table of strings');
    PERFORM tickq.registry_shape(p_entry -> 'ping_url', p_name, 'ping_url', 'string');
    v_kind.name := p_name;
    v_kind.registry := jsonb_strip_nulls(jsonb_build_object(
        'command', v_item, 'cwd', p_entry -> 'cwd', 'env', tickq.env_digests(p_name, p_entry -> 'env'),
        -- a check-in URL is a secret too: its digest, as an env value's
        'ping_url', tickq.env_digests(p_name, jsonb_build_object('ping_url', p_entry -> 'ping_url')) -> 'ping_url',
        -- a step's env is kept as digests too (its values are as secret as a kind's)
        'steps', (SELECT jsonb_agg(CASE WHEN e.step ? 'env' THEN jsonb_set(e.step, '{env}',
                coalesce(tickq.env_digests(p_name || '.' || (e.step ->> 'name'), e.step -> 'env'),
                    e.step -> 'env'))
                ELSE e.step END ORDER BY e.n)
            FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_entry -> 'steps') = 'array'
                THEN p_entry -> 'steps' END) WITH ORDINALITY AS e (step, n)),
        'resume', CASE WHEN p_entry -> 'resume' = 'true' THEN true END,
        -- read once, by the insert of a kind new to the queue (tickq.write_kind)
        'first_run', p_entry -> 'first_run'));
    v_kind.irreversible := coalesce(
        tickq.registry_shape(p_entry -> 'irreversible', p_name, 'irreversible', 'boolean'), 'false') = 'true';

    -- When a kind new to the queue first runs (tickq.write_kind reads it).
    IF p_entry ? 'first_run' AND (jsonb_typeof(p_entry -> 'first_run') <> 'string'
        OR NOT p_entry ->> 'first_run' IN ('now', 'next_slot')) THEN
        PERFORM tickq.registry_error(p_name, 'first_run',
            format('must be "now" or "next_slot", got %s', p_entry -> 'first_run'));
    END IF;
    -- How late a missed slot may still run (tickq.catch_up_kinds skips older ones).
    IF p_entry ? 'catch_up' THEN
        v_kind.catch_up := tickq.registry_seconds(p_entry -> 'catch_up', p_name, 'catch_up');
    END IF;
    v_kind := tickq.with_schedule(v_kind, tickq.parse_schedule(p_name, p_entry, p_default_timezone));

    IF v_steps_timeout IS NOT NULL AND NOT p_entry ? 'timeout' THEN
        v_kind.timeout := v_steps_timeout;
    ELSE
        v_kind.timeout := tickq.registry_seconds(p_entry -> 'timeout', p_name, 'timeout');
    END IF;
    IF v_kind.timeout < v_steps_timeout THEN
        PERFORM tickq.registry_error(p_name, 'timeout',
            format('a chain''s timeout must not be shorter than the sum of its steps'' (%s), got %s',
                tickq.format_duration(v_steps_timeout), tickq.format_duration(v_kind.timeout)));
    END IF;

    v_item := coalesce(p_entry -> 'priority', '"normal"');
    IF jsonb_typeof(v_item) <> 'string'
        OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
        PERFORM tickq.registry_error(p_name, 'priority',
            format('must be one of urgent, high, normal, low, got %s', v_item));
    END IF;
    v_kind.priority := (v_item #>> '{}')::tickq.priority;

    v_kind.retries := tickq.registry_count(coalesce(p_entry -> 'retries', '0'::jsonb), p_name, 'retries');

    v_item := coalesce(tickq.registry_shape(p_entry -> 'enabled', p_name, 'enabled', 'boolean'), 'true');
    v_kind.enabled := (v_item #>> '{}')::boolean;
    SELECT w.weight, w.pools INTO v_kind.weight, v_kind.pools FROM tickq.parse_weight(p_name, p_entry) AS w;
    RETURN v_kind;
END
$$;
COMMENT ON FUNCTION tickq.parse_kind(text, jsonb, text) IS
'Validates one registry entry and returns it as a job_kind row (schedule, timeout, priority, '
'retries, catch_up, enabled, weight, pools, and the command/cwd/env mirror); raises TQ002 naming the kind and key.';

CREATE OR REPLACE FUNCTION tickq.kind_problems(
    p_name text,
    p_entry jsonb,
    p_default_timezone text
) RETURNS TABLE (key text, problem text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_entry jsonb := p_entry;
    v_seen text[] := ARRAY[]::text[];
    v_key text;
    v_step text[];
    v_message text;
    v_low jsonb := to_jsonb((SELECT l.low FROM tickq.registry_limit('timeout') AS l));
    v_long jsonb := to_jsonb((SELECT l.high FROM tickq.registry_limit('every') AS l));
BEGIN
    -- tickq.parse_kind stops at the first value it refuses. Each refused value is recorded and
    -- replaced by one the parser accepts (its default, or a harmless stand-in), and the entry is
    -- parsed again, so one answer names every problem of the kind in the parser's words. A
    -- problem no stand-in can clear (the name, the entry's shape) ends the list.
    LOOP
        BEGIN
            PERFORM tickq.parse_kind(p_name, v_entry, p_default_timezone);
            RETURN;
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
        END;
        RETURN QUERY SELECT v_key, tickq.registry_problem(v_message, p_name, v_key);
        IF v_key = ANY(v_seen) OR v_key IN ('name', '*') OR cardinality(v_seen) > 40 THEN
            RETURN;
        END IF;
        v_seen := array_append(v_seen, v_key);
        IF v_key ~ '^steps\[[0-9]+\]\.[a-z_]+$' THEN
            -- one key of one step: its stand-in, so the other steps are judged too
            v_step := ARRAY['steps', (substring(v_key FROM '[0-9]+')::integer - 1)::text,
                substring(v_key FROM '[a-z_]+$')];
            v_entry := CASE v_step[3]
                WHEN 'timeout' THEN jsonb_set(v_entry, v_step, v_low)
                WHEN 'command' THEN jsonb_set(v_entry, v_step, '["true"]')
                WHEN 'name' THEN jsonb_set(v_entry, v_step, to_jsonb('step-' || v_step[2]))
                ELSE v_entry #- v_step END;
        ELSIF tickq.registry_problem(v_message, p_name, v_key) = 'unknown key'
            OR v_key IN ('cwd', 'env', 'ping_url', 'offset', 'on', 'days', 'months', 'timezone', 'irreversible', 'resume',
                'priority', 'retries', 'enabled', 'first_run', 'weight', 'pools', 'catch_up') THEN
            v_entry := v_entry - v_key;
        ELSIF v_key = 'timeout' THEN
            -- a chain's own timeout may be left out (the sum of its steps')
            v_entry := CASE WHEN v_entry ? 'steps' THEN v_entry - 'timeout'
                ELSE jsonb_set(v_entry, '{timeout}', v_low) END;
        ELSIF v_key = 'command' THEN
            v_entry := jsonb_set(v_entry, '{command}', '["true"]');
        ELSIF v_key = 'at' THEN
            v_entry := jsonb_set(v_entry, '{at}', '"00:00"');
        ELSIF v_key = 'cron' THEN
            -- a refused cron string, or one beside every or at: the schedule is judged no further
            v_entry := jsonb_set(v_entry - ARRAY['cron', 'at', 'on', 'days', 'months', 'timezone', 'offset'],
                '{every}', v_long);
        ELSIF v_key = 'every' AND v_entry ? 'every' AND NOT v_entry ? 'at' THEN
            v_entry := jsonb_set(v_entry, '{every}', v_long);
        ELSIF v_key = 'every' THEN
            -- neither or both of every and at: the schedule is judged no further
            v_entry := jsonb_set(v_entry - ARRAY['at', 'on', 'days', 'months', 'timezone', 'offset'], '{every}', v_long);
        ELSIF v_key = 'steps' AND v_message ~ ' used twice$' THEN
            -- repeated step names (tickq.parse_chain): each step named by its place, so the chain,
            -- its timeout among the rest, is judged further
            v_entry := jsonb_set(v_entry, '{steps}', (SELECT jsonb_agg(jsonb_set(e.step, '{name}',
                to_jsonb('step-' || e.n)) ORDER BY e.n)
                FROM jsonb_array_elements(v_entry -> 'steps') WITH ORDINALITY AS e (step, n)));
        ELSIF v_key ~ '^steps' THEN
            -- a chain whose steps are refused otherwise is judged further as a plain kind
            v_entry := jsonb_set(v_entry - ARRAY['steps', 'resume'], '{command}', '["true"]');
            v_entry := CASE WHEN v_entry ? 'timeout' THEN v_entry
                ELSE jsonb_set(v_entry, '{timeout}', v_low) END;
        ELSE
            RETURN;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.kind_problems(text, jsonb, text) IS
'Every value tickq.parse_kind refuses in one registry entry, one row per key (the message without '
'its "where" start), found by parsing again with each refused value replaced; changes nothing.';

CREATE OR REPLACE FUNCTION tickq.sync_kind(
    p_name text,
    p_entry jsonb,
    p_timezone text,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_incoming tickq.job_kind := tickq.parse_kind(p_name, p_entry, p_timezone);
    v_stored tickq.job_kind;
    v_in_entry jsonb;
    v_stored_entry jsonb;
    v_new_command boolean;
    v_mirror_intact boolean;
    v_wait text;
    v_drift jsonb := '[]'::jsonb;
BEGIN
    v_in_entry := tickq.registry_entry(v_incoming);
    v_incoming.registry := v_in_entry;
    -- Never waits long on a row another session holds: a claim or report of another dispatcher
    -- lets go within milliseconds, a person's psql left in a transaction may never. Past a
    -- quarter of a second that kind's sync is left for the next tick, returned as a notice (field
    -- "locked"), and the other kinds are synced. The settings row, locked by sync_registry,
    -- keeps two syncs apart.
    SELECT * INTO v_stored FROM tickq.job_kind AS k WHERE k.name = p_name FOR UPDATE SKIP LOCKED;
    IF NOT FOUND AND EXISTS (SELECT FROM tickq.job_kind AS k WHERE k.name = p_name) THEN
        v_wait := current_setting('lock_timeout');
        BEGIN
            PERFORM set_config('lock_timeout', CASE WHEN v_wait::interval BETWEEN '1ms' AND '250ms'
                THEN v_wait ELSE '250ms' END, true);
            SELECT * INTO v_stored FROM tickq.job_kind AS k WHERE k.name = p_name FOR UPDATE;
            PERFORM set_config('lock_timeout', v_wait, true);
        EXCEPTION WHEN lock_not_available THEN  -- the rollback of this block restores lock_timeout
            RETURN jsonb_build_array(jsonb_build_object('kind', p_name, 'field', 'locked',
                'registry_edit', false));
        END;
    END IF;
    IF v_stored.name IS NULL THEN
        PERFORM tickq.write_kind(v_incoming, false, false, p_now);
        RETURN v_drift;
    END IF;
    v_stored_entry := tickq.registry_entry(v_stored);
    v_mirror_intact := v_stored.registry_digest IS NOT DISTINCT FROM md5(v_stored.registry::text);
    IF v_stored.retired_at IS NOT NULL THEN
        v_drift := jsonb_build_array(jsonb_build_object('kind', p_name, 'field', 'kind',
            'registry_value', v_in_entry, 'registry_edit', true));
    ELSE
        -- An edit of the registry file is a field whose typed column still held what the
        -- previous registry said (its mirror, job_kind.registry); anything else was changed
        -- behind the registry's back. command, cwd, env and ping_url live only in the mirror: an edit when
        -- the mirror is as the last sync wrote it (its digest), else changed behind its back.
        v_drift := coalesce((
            SELECT jsonb_agg(jsonb_build_object('kind', p_name, 'field', f.key,
                'stored_value', v_stored_entry -> f.key, 'registry_value', v_in_entry -> f.key,
                'registry_edit', (NOT f.key IN ('command', 'cwd', 'env', 'ping_url') OR v_mirror_intact)
                    AND (v_stored.registry -> f.key) IS NOT DISTINCT FROM (v_stored_entry -> f.key)))
            FROM (SELECT jsonb_object_keys(v_stored_entry) UNION SELECT jsonb_object_keys(v_in_entry))
                AS f (key)
            WHERE (v_stored_entry -> f.key) IS DISTINCT FROM (v_in_entry -> f.key)), '[]');
        -- The mirror column itself may have been edited: the registry wins there too.
        IF v_stored.registry IS DISTINCT FROM v_in_entry AND v_stored_entry = v_in_entry THEN
            v_drift := v_drift || jsonb_build_object('kind', p_name, 'field', 'registry',
                'stored_value', v_stored.registry, 'registry_value', v_in_entry, 'registry_edit', false);
        END IF;
    END IF;
    -- A new command (or steps, cwd, env) needs a new first run by hand: disarmed, and logged.
    v_new_command := tickq.command_changed(v_stored, v_incoming);
    -- The disarming follows the edit: an edit when the change of command was one.
    IF v_new_command AND v_stored.armed_at IS NOT NULL THEN
        v_drift := v_drift || jsonb_build_object('kind', p_name, 'field', 'armed',
            'stored_value', jsonb_build_object('armed_at', v_stored.armed_at,
                'armed_by', v_stored.armed_by, 'run_id', v_stored.armed_run_id),
            'registry_edit', v_mirror_intact AND v_stored.retired_at IS NULL);
    END IF;
    IF v_stored_entry IS DISTINCT FROM v_in_entry OR v_stored.registry IS DISTINCT FROM v_in_entry
        OR v_stored.retired_at IS NOT NULL THEN
        PERFORM tickq.write_kind(v_incoming, false, v_new_command, p_now);
    END IF;
    RETURN v_drift;
END
$$;
COMMENT ON FUNCTION tickq.sync_kind(text, jsonb, text, timestamptz) IS
'Makes the job_kind p_name match its registry entry (inserted, overwritten, or brought back '
'from retirement) and returns the drift found, each item {kind, field, stored_value, '
'registry_value, registry_edit}; a row another session holds locked is left as it is, returned '
'as one item {kind, field "locked"}.';

CREATE OR REPLACE FUNCTION tickq.sync_kinds(
    p_kinds jsonb,
    p_timezone text,
    p_now timestamptz DEFAULT now()
) RETURNS jsonb
LANGUAGE plpgsql
AS $$
DECLARE
    v_name text;
    v_drift jsonb := '[]'::jsonb;
BEGIN
    -- Built-in kinds (tickq.housekeeping) come in p_kinds from tickq.sync_registry; a registry
    -- may not name one of its own so.
    FOR v_name IN SELECT jsonb_object_keys(p_kinds) ORDER BY 1 LOOP
        v_drift := v_drift || tickq.sync_kind(v_name, p_kinds -> v_name, p_timezone, p_now);
    END LOOP;

    -- Kinds gone from the registry: retired (disabled), never deleted, so their history stays.
    -- A row another session holds is left for the next sync, as a notice (field "locked").
    WITH gone AS (
        -- Agent kinds belong to tickq.agent rows, not to the registry file.
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.retired_at IS NULL AND NOT p_kinds ? k.name AND k.name NOT LIKE 'agent.%'
    ), free AS (
        SELECT k.name FROM tickq.job_kind AS k
        WHERE k.name IN (SELECT g.name FROM gone AS g) FOR UPDATE SKIP LOCKED
    ), retired AS (
        UPDATE tickq.job_kind AS k SET enabled = false, retired_at = p_now, updated_at = p_now
        WHERE k.name IN (SELECT f.name FROM free AS f)
        RETURNING k.*
    )
    SELECT v_drift || coalesce((SELECT jsonb_agg(jsonb_build_object('kind', r.name, 'field', 'kind',
            'stored_value', tickq.registry_entry(r), 'registry_edit', true) ORDER BY r.name)
        FROM retired AS r), '[]') || coalesce((SELECT jsonb_agg(jsonb_build_object('kind', g.name,
            'field', 'locked', 'registry_edit', false) ORDER BY g.name)
        FROM gone AS g WHERE NOT g.name IN (SELECT f.name FROM free AS f)), '[]')
    INTO v_drift;
    RETURN v_drift;
END
$$;
COMMENT ON FUNCTION tickq.sync_kinds(jsonb, text, timestamptz) IS
'Makes the queue''s kinds match p_kinds (name -> registry entry): each synced by tickq.sync_kind, '
'kinds missing from it retired (agents'' kinds excepted), never waiting on a row another '
'session holds (returned as field "locked", left for the next sync). Returns the drift found.';
