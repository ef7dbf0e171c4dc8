-- User-built agents: saved prompts on a schedule, each with exactly one queue row, the job_kind
-- "agent.<name>". The rows are checked by the trigger tickq.check_agent (migration 0015), and
-- the queue row follows the agent row through the trigger tickq.agent_changed, so an edit in
-- psql is held to the same caps and moves the same kind.
--
-- SQLSTATEs (class TQ, see sql/api/01_schedule.sql):
--   TQ040 invalid_agent      an agent value the database refuses (names the field and value)
--   TQ041 unknown_agent      no agent of that name (or id)
--   TQ042 agent_exists       `add` of a name already taken
--   TQ043 unknown_tool       a tool the registry's [agents.tools] does not offer
--   TQ044 transcript_refused a transcript for a run that is not the live run of that agent

CREATE OR REPLACE FUNCTION tickq.agent_error(
    p_name text,
    p_field text,
    p_message text,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'agent %: %: %', coalesce(quote_literal(left(p_name, 80)), 'null'), p_field, p_message
        USING ERRCODE = 'TQ040', DETAIL = format('field %s of tickq.agent', p_field),
        HINT = 'Nothing was changed; tickq agent add --help lists the limits.';
END
$$;
COMMENT ON FUNCTION tickq.agent_error(text, text, text, timestamptz) IS
'Raises TQ040 naming the agent, the field and the refused value.';

CREATE OR REPLACE FUNCTION tickq.apply_agent_kind(
    p_agent tickq.agent,
    p_reschedule boolean,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_caps tickq.agent_settings;
    v_kind text := 'agent.' || p_agent.name;
    v_timeout interval;
    v_next timestamptz;
BEGIN
    SELECT * INTO STRICT v_caps FROM tickq.agent_settings;
    -- The registry may have lowered its cap since the agent was saved: the lower one holds.
    v_timeout := least(p_agent.timeout, v_caps.max_timeout);
    v_next := tickq.next_slot(p_agent.every, NULL, p_agent.at_times, p_agent.on_days, p_agent.timezone, p_now);
    IF EXISTS (SELECT FROM tickq.job_kind AS k
        WHERE k.name = v_kind AND NOT k.registry ? 'agent' AND k.retired_at IS NULL) THEN
        PERFORM tickq.agent_error(p_agent.name, 'name',
            format('the registry already has a kind named %s', quote_literal(v_kind)));
    END IF;
    -- The lease must cover the new timeout before the kind carries it (checked at commit).
    UPDATE tickq.settings AS s SET lease = v_timeout + s.lease_margin
    WHERE s.lease < v_timeout + s.lease_margin;
    INSERT INTO tickq.job_kind AS k (
        name, registry, every, at_times, on_days, timezone, timeout, priority, retries, enabled,
        due_at, created_at, updated_at
    ) VALUES (
        v_kind,
        -- A mirror for psql readers; the command of an agent run comes from the registry file.
        jsonb_strip_nulls(jsonb_build_object('agent', p_agent.id, 'owner', p_agent.owner)),
        p_agent.every, p_agent.at_times, p_agent.on_days, p_agent.timezone, v_timeout,
        v_caps.priority, v_caps.retries, NOT p_agent.paused,
        -- New: an every cadence is due at once, a calendar one at its next slot.
        CASE WHEN p_agent.every IS NOT NULL THEN p_now ELSE v_next END,
        p_now, p_now
    )
    ON CONFLICT (name) DO UPDATE SET
        registry = excluded.registry,
        every = excluded.every,
        at_times = excluded.at_times,
        on_days = excluded.on_days,
        timezone = excluded.timezone,
        timeout = excluded.timeout,
        priority = excluded.priority,
        retries = excluded.retries,
        enabled = excluded.enabled,
        retired_at = NULL,
        -- A retired kind coming back, a new schedule or a resume: the next slot after now (a
        -- resumed agent does not catch up on the runs it missed while paused).
        due_at = CASE
            WHEN k.retired_at IS NOT NULL THEN excluded.due_at
            WHEN p_reschedule THEN v_next
            ELSE k.due_at
        END,
        attempts = CASE WHEN k.retired_at IS NOT NULL THEN 0 ELSE k.attempts END,
        next_trigger = CASE WHEN k.retired_at IS NOT NULL THEN 'schedule' ELSE k.next_trigger END,
        updated_at = p_now;
END
$$;
COMMENT ON FUNCTION tickq.apply_agent_kind(tickq.agent, boolean, timestamptz) IS
'Internal: creates or updates the job_kind "agent.<name>" of an agent (schedule, timeout within '
'the registry''s cap, the agents'' lane and retries, enabled unless paused), raising the lease '
'when the timeout needs it; p_reschedule moves it to its next slot after p_now.';

CREATE OR REPLACE FUNCTION tickq.retire_agent_kind(
    p_name text,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE sql
AS $$
    -- Retired, never deleted, so the runs and transcripts of a removed agent stay readable.
    UPDATE tickq.job_kind AS k SET enabled = false, retired_at = p_now, updated_at = p_now
    WHERE k.name = 'agent.' || p_name AND k.retired_at IS NULL;
$$;
COMMENT ON FUNCTION tickq.retire_agent_kind(text, timestamptz) IS
'Internal: retires the job_kind of a removed agent (disabled, history kept).';

CREATE OR REPLACE FUNCTION tickq.agent_json_text(
    p_name text,
    p_field text,
    p_value jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS text
LANGUAGE plpgsql
AS $$
BEGIN
    IF p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN
        RETURN NULL;
    END IF;
    IF jsonb_typeof(p_value) <> 'string' THEN
        PERFORM tickq.agent_error(p_name, p_field, format('must be a string, got %s', left(p_value::text, 80)));
    END IF;
    RETURN p_value #>> '{}';
END
$$;
COMMENT ON FUNCTION tickq.agent_json_text(text, text, jsonb, timestamptz) IS
'Internal: a JSON string field of save_agent as text (null for null), or TQ040 naming the field.';

CREATE OR REPLACE FUNCTION tickq.agent_json_seconds(
    p_name text,
    p_field text,
    p_value jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS interval
LANGUAGE plpgsql
AS $$
BEGIN
    IF jsonb_typeof(p_value) IS DISTINCT FROM 'number' OR (p_value #>> '{}')::numeric <= 0
        OR (p_value #>> '{}')::numeric > 2147483647 THEN
        PERFORM tickq.agent_error(p_name, p_field,
            format('must be a positive number of seconds, got %s', coalesce(left(p_value::text, 80), 'nothing')));
    END IF;
    RETURN make_interval(secs => (p_value #>> '{}')::double precision);
END
$$;
COMMENT ON FUNCTION tickq.agent_json_seconds(text, text, jsonb, timestamptz) IS
'Internal: a JSON duration field of save_agent (seconds) as an interval, or TQ040 naming the field.';

DROP FUNCTION IF EXISTS tickq.save_agent(text, jsonb, boolean, timestamptz);

CREATE FUNCTION tickq.save_agent(
    p_name text,
    p_fields jsonb,
    p_create boolean DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS tickq.agent
LANGUAGE plpgsql
AS $$
DECLARE
    v_old tickq.agent;
    v_new tickq.agent;
    v_exists boolean;
    v_key text;
    v_item jsonb;
    v_day_names constant text[] := ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
BEGIN
    IF jsonb_typeof(p_fields) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.agent_error(p_name, '*', 'the fields must be a JSON object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_fields) LOOP
        IF NOT v_key = ANY(ARRAY['prompt', 'every', 'at', 'on', 'timezone', 'max_turns', 'timeout', 'owner',
            'tools', 'paused']) THEN
            PERFORM tickq.agent_error(p_name, v_key, 'unknown field');
        END IF;
    END LOOP;
    -- Agent edits take the settings row first, as a registry sync does, so the two never lock
    -- kind and settings rows in opposite orders.
    PERFORM FROM tickq.settings FOR UPDATE;
    SELECT * INTO v_old FROM tickq.agent AS a WHERE a.name = p_name FOR UPDATE;
    v_exists := FOUND;
    IF v_exists AND p_create THEN
        RAISE EXCEPTION 'agent % already exists', quote_literal(p_name)
            USING ERRCODE = 'TQ042', HINT = 'Use tickq agent edit to change it, or pick another name.';
    END IF;
    IF NOT v_exists AND NOT p_create THEN
        RAISE EXCEPTION 'no agent %', coalesce(quote_literal(p_name), 'null')
            USING ERRCODE = 'TQ041', HINT = 'tickq agent list shows the agents.';
    END IF;
    IF v_exists THEN
        v_new := v_old;
    ELSE
        SELECT p_name, s.max_turns, s.max_timeout, false, '{}'::text[]
        INTO v_new.name, v_new.max_turns, v_new.timeout, v_new.paused, v_new.tools
        FROM tickq.agent_settings AS s;
        IF NOT p_fields ? 'prompt' THEN
            PERFORM tickq.agent_error(p_name, 'prompt', 'a new agent needs a prompt');
        END IF;
        IF NOT (p_fields ? 'every' OR p_fields ? 'at') THEN
            PERFORM tickq.agent_error(p_name, 'schedule', 'a new agent needs "every" or "at"');
        END IF;
    END IF;

    IF p_fields ? 'prompt' THEN
        v_new.prompt := tickq.agent_json_text(p_name, 'prompt', p_fields -> 'prompt');
    END IF;
    IF p_fields ? 'every' AND p_fields ? 'at' THEN
        PERFORM tickq.agent_error(p_name, 'every', 'give either "every" or "at", not both');
    END IF;
    IF p_fields ? 'every' THEN
        IF p_fields ? 'on' OR p_fields ? 'timezone' THEN
            PERFORM tickq.agent_error(p_name, CASE WHEN p_fields ? 'on' THEN 'on' ELSE 'timezone' END,
                'only an "at" schedule takes this field');
        END IF;
        v_new.every := tickq.agent_json_seconds(p_name, 'every', p_fields -> 'every');
        v_new.at_times := NULL;
        v_new.on_days := NULL;
        v_new.timezone := 'UTC';
    END IF;
    IF p_fields ? 'at' THEN
        v_item := p_fields -> 'at';
        IF jsonb_typeof(v_item) = 'string' THEN
            v_item := jsonb_build_array(v_item);
        END IF;
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t)
                WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$') THEN
            PERFORM tickq.agent_error(p_name, 'at',
                format('must be times of day "HH:MM" (00:00-23:59), got %s', left(v_item::text, 80)));
        END IF;
        SELECT array_agg(DISTINCT (e.t #>> '{}')::time ORDER BY (e.t #>> '{}')::time) INTO v_new.at_times
        FROM jsonb_array_elements(v_item) AS e (t);
        IF v_new.every IS NOT NULL THEN
            -- From every to at: the zone is the queue's default unless one is given.
            v_new.timezone := (SELECT s.timezone FROM tickq.settings AS s);
            v_new.on_days := NULL;
        END IF;
        v_new.every := NULL;
    END IF;
    IF p_fields ? 'on' THEN
        v_item := p_fields -> 'on';
        IF jsonb_typeof(v_item) = 'null' THEN
            v_new.on_days := NULL;
        ELSIF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (d)
                WHERE jsonb_typeof(e.d) <> 'string' OR NOT (e.d #>> '{}') = ANY(v_day_names)) THEN
            PERFORM tickq.agent_error(p_name, 'on',
                format('must be weekdays (mon tue wed thu fri sat sun), got %s', left(v_item::text, 80)));
        ELSE
            SELECT array_agg(DISTINCT array_position(v_day_names, e.d #>> '{}')::smallint) INTO v_new.on_days
            FROM jsonb_array_elements(v_item) AS e (d);
        END IF;
    END IF;
    IF p_fields ? 'timezone' THEN
        v_new.timezone := tickq.agent_json_text(p_name, 'timezone', p_fields -> 'timezone');
    ELSIF NOT v_exists AND v_new.at_times IS NOT NULL THEN
        v_new.timezone := (SELECT s.timezone FROM tickq.settings AS s);
    ELSIF NOT v_exists THEN
        v_new.timezone := 'UTC';
    END IF;
    IF p_fields ? 'max_turns' THEN
        v_item := p_fields -> 'max_turns';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'number' OR (v_item #>> '{}')::numeric NOT BETWEEN 1 AND 6
            OR (v_item #>> '{}')::numeric <> trunc((v_item #>> '{}')::numeric) THEN
            PERFORM tickq.agent_error(p_name, 'max_turns',
                format('turns must be a whole number from 1 to 6, got %s', left(v_item::text, 80)));
        END IF;
        v_new.max_turns := (v_item #>> '{}')::integer;
    END IF;
    IF p_fields ? 'timeout' THEN
        v_new.timeout := tickq.agent_json_seconds(p_name, 'timeout', p_fields -> 'timeout');
    END IF;
    IF p_fields ? 'owner' THEN
        v_new.owner := tickq.agent_json_text(p_name, 'owner', p_fields -> 'owner');
    END IF;
    IF p_fields ? 'tools' THEN
        v_item := p_fields -> 'tools';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array'
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t) WHERE jsonb_typeof(e.t) <> 'string') THEN
            PERFORM tickq.agent_error(p_name, 'tools',
                format('must be a list of tool names, got %s', left(v_item::text, 80)));
        END IF;
        v_new.tools := ARRAY(SELECT e.t FROM jsonb_array_elements_text(v_item) AS e (t));
    END IF;
    IF p_fields ? 'paused' THEN
        IF jsonb_typeof(p_fields -> 'paused') IS DISTINCT FROM 'boolean' THEN
            PERFORM tickq.agent_error(p_name, 'paused', 'must be true or false');
        END IF;
        v_new.paused := (p_fields ->> 'paused')::boolean;
    END IF;

    -- The triggers check the row (tickq.check_agent) and move its kind (tickq.agent_changed).
    PERFORM set_config('tickq.agent_now', p_now::text, true);
    IF v_exists THEN
        UPDATE tickq.agent AS a SET
            prompt = v_new.prompt, every = v_new.every, at_times = v_new.at_times, on_days = v_new.on_days,
            timezone = v_new.timezone, max_turns = v_new.max_turns, timeout = v_new.timeout,
            owner = v_new.owner, tools = v_new.tools, paused = v_new.paused, updated_at = p_now
        WHERE a.id = v_old.id
        RETURNING a.* INTO v_new;
    ELSE
        INSERT INTO tickq.agent AS a (
            name, prompt, every, at_times, on_days, timezone, max_turns, timeout, owner, tools, paused,
            created_at, updated_at
        ) VALUES (
            v_new.name, v_new.prompt, v_new.every, v_new.at_times, v_new.on_days, v_new.timezone,
            v_new.max_turns, v_new.timeout, v_new.owner, v_new.tools, v_new.paused, p_now, p_now
        )
        RETURNING a.* INTO v_new;
    END IF;
    PERFORM set_config('tickq.agent_now', '', true);
    RETURN v_new;
END
$$;
COMMENT ON FUNCTION tickq.save_agent(text, jsonb, boolean, timestamptz) IS
'Creates (p_create true), edits (false) or upserts (null) an agent from JSON fields: prompt, '
'every (seconds) or at ["HH:MM"] with on [weekday names] and timezone, max_turns, timeout '
'(seconds), owner, tools, paused. Its job_kind "agent.<name>" follows. Raises TQ040 invalid '
'value (naming field and value), TQ041 unknown agent, TQ042 name taken, TQ043 unknown tool.';

CREATE OR REPLACE FUNCTION tickq.pause_agent(
    p_name text,
    p_now timestamptz DEFAULT now()
) RETURNS tickq.agent
LANGUAGE sql
AS $$
    SELECT tickq.save_agent(p_name, '{"paused": true}', false, p_now);
$$;
COMMENT ON FUNCTION tickq.pause_agent(text, timestamptz) IS
'Pauses an agent: its kind is disabled (a run in progress finishes). TQ041 for an unknown agent.';

CREATE OR REPLACE FUNCTION tickq.resume_agent(
    p_name text,
    p_now timestamptz DEFAULT now()
) RETURNS tickq.agent
LANGUAGE sql
AS $$
    SELECT tickq.save_agent(p_name, '{"paused": false}', false, p_now);
$$;
COMMENT ON FUNCTION tickq.resume_agent(text, timestamptz) IS
'Resumes a paused agent: its kind is enabled and due at its next slot after p_now (no catch-up). '
'TQ041 for an unknown agent.';

CREATE OR REPLACE FUNCTION tickq.remove_agent(
    p_name text,
    p_now timestamptz DEFAULT now()
) RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
BEGIN
    PERFORM FROM tickq.settings FOR UPDATE;
    PERFORM set_config('tickq.agent_now', p_now::text, true);
    DELETE FROM tickq.agent AS a WHERE a.name = p_name RETURNING a.id INTO v_id;
    PERFORM set_config('tickq.agent_now', '', true);
    IF v_id IS NULL THEN
        RAISE EXCEPTION 'no agent %', coalesce(quote_literal(p_name), 'null')
            USING ERRCODE = 'TQ041', HINT = 'tickq agent list shows the agents.';
    END IF;
    RETURN v_id;
END
$$;
COMMENT ON FUNCTION tickq.remove_agent(text, timestamptz) IS
'Deletes an agent and retires its kind (runs and transcripts stay until housekeeping prunes '
'them); returns its id. TQ041 for an unknown agent.';

CREATE OR REPLACE FUNCTION tickq.sync_agents(
    p_agents jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_section jsonb := coalesce(p_agents, '{}'::jsonb);
    v_old tickq.agent_settings;
    v_new tickq.agent_settings;
    v_key text;
    v_item jsonb;
    v_agent tickq.agent;
BEGIN
    IF jsonb_typeof(v_section) <> 'object' THEN
        RAISE EXCEPTION 'registry: [agents] must be a table' USING ERRCODE = 'TQ002',
            HINT = 'Fix the registry file; nothing was changed.';
    END IF;
    SELECT * INTO STRICT v_old FROM tickq.agent_settings FOR UPDATE;
    v_new := v_old;
    -- Absent keys take their defaults: the registry alone decides the agents' bounds.
    v_new.priority := 'normal';
    v_new.max_turns := 6;
    v_new.max_timeout := '10 minutes';
    v_new.retries := 0;
    v_new.tools := '{}';
    FOR v_key IN SELECT jsonb_object_keys(v_section) LOOP
        v_item := v_section -> v_key;
        CASE v_key
            WHEN 'priority' THEN
                IF jsonb_typeof(v_item) <> 'string'
                    OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
                    RAISE EXCEPTION 'registry: [agents] key "priority": must be one of urgent, high, normal, low, got %',
                        v_item USING ERRCODE = 'TQ002', HINT = 'Fix the registry file; nothing was changed.';
                END IF;
                v_new.priority := (v_item #>> '{}')::tickq.priority;
            WHEN 'max_turns' THEN
                IF jsonb_typeof(v_item) <> 'number' OR (v_item #>> '{}')::numeric NOT BETWEEN 1 AND 6
                    OR (v_item #>> '{}')::numeric <> trunc((v_item #>> '{}')::numeric) THEN
                    RAISE EXCEPTION 'registry: [agents] key "max_turns": must be a whole number from 1 to 6, got %',
                        v_item USING ERRCODE = 'TQ002', HINT = 'Fix the registry file; nothing was changed.';
                END IF;
                v_new.max_turns := (v_item #>> '{}')::integer;
            WHEN 'timeout' THEN
                IF jsonb_typeof(v_item) <> 'number' OR (v_item #>> '{}')::numeric NOT BETWEEN 1 AND 600 THEN
                    RAISE EXCEPTION 'registry: [agents] key "timeout": must be 1 to 600 seconds (10m), got %',
                        v_item USING ERRCODE = 'TQ002', HINT = 'Fix the registry file; nothing was changed.';
                END IF;
                v_new.max_timeout := make_interval(secs => (v_item #>> '{}')::double precision);
            WHEN 'retries' THEN
                IF jsonb_typeof(v_item) <> 'number' OR (v_item #>> '{}')::numeric NOT BETWEEN 0 AND 10
                    OR (v_item #>> '{}')::numeric <> trunc((v_item #>> '{}')::numeric) THEN
                    RAISE EXCEPTION 'registry: [agents] key "retries": must be a whole number from 0 to 10, got %',
                        v_item USING ERRCODE = 'TQ002', HINT = 'Fix the registry file; nothing was changed.';
                END IF;
                v_new.retries := (v_item #>> '{}')::integer;
            WHEN 'tools' THEN
                IF jsonb_typeof(v_item) <> 'array' OR EXISTS (
                    SELECT FROM jsonb_array_elements(v_item) AS e (t)
                    WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^[a-z0-9][a-z0-9_-]{0,62}$') THEN
                    RAISE EXCEPTION 'registry: [agents] key "tools": must be a list of tool names, got %',
                        left(v_item::text, 200) USING ERRCODE = 'TQ002',
                        HINT = 'Fix the registry file; nothing was changed.';
                END IF;
                v_new.tools := ARRAY(SELECT DISTINCT e.t FROM jsonb_array_elements_text(v_item) AS e (t) ORDER BY 1);
            ELSE
                -- The endpoint, model, key name, runner and tool commands stay in the registry
                -- file: the database never holds them.
                NULL;
        END CASE;
    END LOOP;
    IF (v_new.priority, v_new.max_turns, v_new.max_timeout, v_new.retries, v_new.tools)
        IS NOT DISTINCT FROM (v_old.priority, v_old.max_turns, v_old.max_timeout, v_old.retries, v_old.tools) THEN
        RETURN;
    END IF;
    UPDATE tickq.agent_settings AS s SET
        priority = v_new.priority, max_turns = v_new.max_turns, max_timeout = v_new.max_timeout,
        retries = v_new.retries, tools = v_new.tools, updated_at = p_now;
    -- Each agent's kind takes the new lane, retries and (capped) timeout.
    FOR v_agent IN SELECT * FROM tickq.agent AS a ORDER BY a.name LOOP
        PERFORM tickq.apply_agent_kind(v_agent, false, p_now);
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.sync_agents(jsonb, timestamptz) IS
'Called by tickq.sync_registry with the registry''s "agents" object: sets tickq.agent_settings '
'(priority, max_turns, timeout in seconds, retries, tool names; absent keys take the defaults) '
'and moves every agent''s kind to the new lane, retries and capped timeout. TQ002 on a bad value.';

CREATE OR REPLACE FUNCTION tickq.agent_for_kind(
    p_kind text,
    p_now timestamptz DEFAULT now()
) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT a.id FROM tickq.agent AS a WHERE 'agent.' || a.name = p_kind;
$$;
COMMENT ON FUNCTION tickq.agent_for_kind(text, timestamptz) IS
'The id of the agent that owns the kind p_kind ("agent.<name>"), or null. The dispatcher passes '
'this id, and nothing else of the agent, to the registry''s agent runner.';

CREATE OR REPLACE FUNCTION tickq.load_agent(
    p_id bigint,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    id bigint, name text, kind text, prompt text, max_turns integer, timeout interval, owner text,
    tools text[], timezone text
)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT a.id, a.name, 'agent.' || a.name, a.prompt, least(a.max_turns, s.max_turns),
        least(a.timeout, s.max_timeout), a.owner, a.tools, a.timezone
    FROM tickq.agent AS a
    CROSS JOIN tickq.agent_settings AS s
    WHERE a.id = p_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no agent with id %', p_id USING ERRCODE = 'TQ041',
            HINT = 'The agent was removed after its run was claimed.';
    END IF;
END
$$;
COMMENT ON FUNCTION tickq.load_agent(bigint, timestamptz) IS
'What the agent runner needs of an agent: its prompt, turn and time limits within the registry''s '
'current caps, owner and tools. TQ041 when there is no such agent.';

CREATE OR REPLACE FUNCTION tickq.record_agent_turn(
    p_run_id bigint,
    p_agent_id bigint,
    p_turn integer,
    p_entry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    -- Only the live run of the agent's own kind takes a transcript.
    IF NOT EXISTS (
        SELECT FROM tickq.agent AS a
        INNER JOIN tickq.job_kind AS k ON k.name = 'agent.' || a.name
        WHERE a.id = p_agent_id AND k.run_id = p_run_id
    ) THEN
        RAISE EXCEPTION 'run % is not the live run of agent %', p_run_id, p_agent_id
            USING ERRCODE = 'TQ044', HINT = 'Nothing was recorded.';
    END IF;
    INSERT INTO tickq.agent_turn AS t (run_id, turn, recorded_at, entry)
    VALUES (p_run_id, p_turn, p_now, p_entry)
    ON CONFLICT (run_id, turn) DO UPDATE SET recorded_at = excluded.recorded_at, entry = excluded.entry;
END
$$;
COMMENT ON FUNCTION tickq.record_agent_turn(bigint, bigint, integer, jsonb, timestamptz) IS
'Records (or replaces) one turn of the transcript of a live agent run; TQ044 unless p_run_id is '
'the run the agent''s kind is leased to. The entry is bounded by the domain tickq.agent_turn_entry.';

CREATE OR REPLACE FUNCTION tickq.agents_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    id bigint, name text, schedule text, state text, max_turns integer, timeout interval, owner text,
    tools text[], next_due_at timestamptz, last_outcome tickq.outcome, last_finished_at timestamptz
)
LANGUAGE sql STABLE
AS $$
    SELECT a.id, a.name,
        tickq.describe_schedule(a.every, NULL, a.at_times, a.on_days, a.timezone, p_now),
        CASE WHEN a.paused THEN 'paused' WHEN k.run_id IS NOT NULL THEN 'running' ELSE 'scheduled' END,
        a.max_turns, a.timeout, a.owner, a.tools,
        CASE WHEN k.enabled THEN k.due_at END,
        r.outcome, r.finished_at
    FROM tickq.agent AS a
    LEFT JOIN tickq.job_kind AS k ON k.name = 'agent.' || a.name
    LEFT JOIN tickq.job_run AS r ON r.id = k.last_run_id
    ORDER BY a.name
$$;
COMMENT ON FUNCTION tickq.agents_at(timestamptz) IS
'Every agent with its schedule, state (paused, running, scheduled), limits, next due time and '
'last outcome (tickq agent list).';

CREATE OR REPLACE FUNCTION tickq.agent_next_runs(
    p_name text,
    p_count integer DEFAULT 5,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (run_at timestamptz, local_time timestamp, timezone text)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    v_agent tickq.agent;
    v_at timestamptz := p_now;
    v_found integer := 0;
BEGIN
    SELECT * INTO v_agent FROM tickq.agent AS a WHERE a.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no agent %', quote_literal(p_name) USING ERRCODE = 'TQ041',
            HINT = 'tickq agent list shows the agents.';
    END IF;
    WHILE v_found < least(p_count, 100) LOOP
        v_at := tickq.next_slot(v_agent.every, NULL, v_agent.at_times, v_agent.on_days, v_agent.timezone, v_at);
        EXIT WHEN v_at IS NULL;
        v_found := v_found + 1;
        run_at := v_at;
        local_time := v_at AT TIME ZONE v_agent.timezone;
        timezone := v_agent.timezone;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.agent_next_runs(text, integer, timestamptz) IS
'The next p_count slots of an agent after p_now, as instants and as wall-clock times in the '
'agent''s own zone (tickq agent show). TQ041 for an unknown agent.';

CREATE OR REPLACE FUNCTION tickq.agent_runs(
    p_name text,
    p_limit integer DEFAULT 20,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    run_id bigint, run_trigger tickq.run_trigger, attempt integer, claimed_at timestamptz,
    outcome tickq.outcome, duration interval, turns integer, output_tail text
)
LANGUAGE sql STABLE
AS $$
    SELECT r.id, r.run_trigger, r.attempt, r.claimed_at, r.outcome, r.duration,
        (SELECT count(*)::integer FROM tickq.agent_turn AS t WHERE t.run_id = r.id),
        r.output_tail
    FROM tickq.job_run AS r
    WHERE r.kind = 'agent.' || p_name AND r.claimed_at <= p_now
    ORDER BY r.id DESC
    LIMIT p_limit
$$;
COMMENT ON FUNCTION tickq.agent_runs(text, integer, timestamptz) IS
'The latest runs of an agent (also of a removed one, by name), newest first, with their turn '
'counts (tickq agent history).';

CREATE OR REPLACE FUNCTION tickq.agent_transcript(
    p_run_id bigint,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (turn integer, recorded_at timestamptz, entry jsonb)
LANGUAGE sql STABLE
AS $$
    SELECT t.turn, t.recorded_at, t.entry FROM tickq.agent_turn AS t
    WHERE t.run_id = p_run_id AND t.recorded_at <= p_now
    ORDER BY t.turn
$$;
COMMENT ON FUNCTION tickq.agent_transcript(bigint, timestamptz) IS
'The transcript of one agent run, turn by turn (tickq agent history NAME --run ID).';

CREATE OR REPLACE FUNCTION tickq.agents_export(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (name text, fields jsonb)
LANGUAGE sql STABLE
AS $$
    -- What tickq.save_agent takes, per agent: `check` and `simulate` load the queue's agents
    -- into their scratch database with it, so agents take slots there too.
    SELECT a.name, jsonb_strip_nulls(jsonb_build_object(
        'prompt', a.prompt,
        'every', extract(EPOCH FROM a.every)::bigint,
        'at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI')) FROM unnest(a.at_times) AS t (at_time)),
        'on', (SELECT jsonb_agg((ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[d.day])
            FROM unnest(a.on_days) AS d (day)),
        'timezone', CASE WHEN a.at_times IS NOT NULL THEN a.timezone END,
        'max_turns', a.max_turns,
        'timeout', extract(EPOCH FROM a.timeout)::bigint,
        'paused', a.paused
    ))
    FROM tickq.agent AS a
    ORDER BY a.name
$$;
COMMENT ON FUNCTION tickq.agents_export(timestamptz) IS
'Every agent''s saved fields as tickq.save_agent takes them (for the simulator''s scratch queue).';

CREATE OR REPLACE FUNCTION tickq.agent_detail(
    p_name text,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    id bigint, name text, schedule text, state text, max_turns integer, timeout_s integer, owner text,
    tools text[], next_due_at timestamptz, last_outcome tickq.outcome, last_finished_at timestamptz,
    prompt text, timezone text
)
LANGUAGE sql STABLE
AS $$
    SELECT a.id, a.name, a.schedule, a.state, a.max_turns, extract(EPOCH FROM a.timeout)::integer,
        a.owner, a.tools, a.next_due_at, a.last_outcome, a.last_finished_at, g.prompt, g.timezone
    FROM tickq.agents_at(p_now) AS a
    INNER JOIN tickq.agent AS g ON a.id = g.id
    WHERE a.name = p_name
$$;
COMMENT ON FUNCTION tickq.agent_detail(text, timestamptz) IS
'One agent as tickq agent show prints it: the list''s columns, its prompt and its zone.';

CREATE OR REPLACE FUNCTION tickq.agent_run_transcript(
    p_name text,
    p_run_id bigint,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (turn integer, recorded_at timestamptz, entry jsonb)
LANGUAGE sql STABLE
AS $$
    -- Only a run of that agent: a run id of another kind shows nothing.
    SELECT t.turn, t.recorded_at, t.entry
    FROM tickq.agent_transcript(p_run_id, p_now) AS t
    WHERE EXISTS (SELECT FROM tickq.job_run AS r WHERE r.id = p_run_id AND r.kind = 'agent.' || p_name)
$$;
COMMENT ON FUNCTION tickq.agent_run_transcript(text, bigint, timestamptz) IS
'The transcript of run p_run_id if it is a run of agent p_name (tickq agent history NAME --run ID).';
