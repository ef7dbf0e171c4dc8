-- User-built agents: saved prompts on a schedule, each with exactly one queue row, the job_kind
-- "agent.<name>". The rows are checked by the trigger tickq.check_agent (its body in
-- sql/api/09_agent_rules.sql), and the queue row follows the agent row through the trigger
-- tickq.agent_changed, so an edit in psql is held to the same caps and moves the same kind.
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
    p_message text
) RETURNS void
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'agent %: %: %', coalesce(quote_literal(left(p_name, 80)), 'null'), p_field, p_message
        USING ERRCODE = 'TQ040', DETAIL = format('field %s of tickq.agent', p_field),
        HINT = 'Nothing was changed; tickq agent add --help lists the limits.';
END
$$;
COMMENT ON FUNCTION tickq.agent_error(text, text, text) IS
'Raises TQ040 naming the agent, the field and the refused value.';

CREATE OR REPLACE FUNCTION tickq.agent_json_text(
    p_name text,
    p_field text,
    p_value jsonb
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
COMMENT ON FUNCTION tickq.agent_json_text(text, text, jsonb) IS
'Internal: a JSON string field of save_agent as text (null for null), or TQ040 naming the field.';

CREATE OR REPLACE FUNCTION tickq.agent_json_seconds(
    p_name text,
    p_field text,
    p_value jsonb
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
COMMENT ON FUNCTION tickq.agent_json_seconds(text, text, jsonb) IS
'Internal: a JSON duration field of save_agent (seconds) as an interval, or TQ040 naming the field.';

CREATE OR REPLACE FUNCTION tickq.agent_schedule(
    p_agent tickq.agent,
    p_exists boolean,
    p_fields jsonb
) RETURNS tickq.agent
LANGUAGE plpgsql
AS $$
DECLARE
    v_agent tickq.agent := p_agent;
    v_item jsonb;
    v_schedule tickq.schedule;
    -- the agent's own schedule, as its fields would give it
    v_own jsonb := tickq.schedule_entry(tickq.schedule_of(p_agent));
    v_message text;
    v_key text;
BEGIN
    -- The schedule: the fields given over the agent's own (an edit names only what changes),
    -- judged by the parser registry kinds use (tickq.parse_schedule).
    IF p_fields ?| ARRAY['every', 'at', 'on', 'days', 'months', 'cron', 'timezone'] THEN
        v_item := jsonb_strip_nulls(p_fields - ARRAY['prompt', 'max_turns', 'timeout', 'owner', 'tools', 'paused']);
        IF p_exists AND NOT v_item ?| ARRAY['every', 'at', 'cron'] THEN
            v_item := v_item || (v_own - ARRAY['on', 'days', 'months', 'timezone']);
        END IF;
        -- An at schedule keeps its day filters and its zone unless they are given, a cron string
        -- its zone: the agent's own schedule as the file writes it (tickq.schedule_entry) under what
        -- the edit says.
        IF p_exists AND NOT v_item ? 'every' AND (v_item ? 'cron') = (p_agent.cron IS NOT NULL) THEN
            v_item := (v_own - ARRAY['every', 'at', 'cron']
                - CASE WHEN v_item ? 'cron' THEN ARRAY['on', 'days', 'months'] ELSE '{}' END) || v_item;
        END IF;
        BEGIN
            v_schedule := tickq.parse_schedule(p_agent.name, v_item, (SELECT s.timezone FROM tickq.settings AS s));
        EXCEPTION WHEN SQLSTATE 'TQ002' THEN
            GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_key = COLUMN_NAME;
            PERFORM tickq.agent_error(p_agent.name, v_key, tickq.registry_problem(v_message, p_agent.name, v_key));
        END;
        v_agent := tickq.with_schedule(v_agent, v_schedule);
    END IF;
    RETURN v_agent;
END
$$;
COMMENT ON FUNCTION tickq.agent_schedule(tickq.agent, boolean, jsonb) IS
'Internal: p_agent with the schedule fields of save_agent (every, at, on, days, months, cron, '
'timezone) applied over '
'its own, judged by tickq.parse_schedule; TQ040 naming the field.';

CREATE OR REPLACE FUNCTION tickq.agent_with_fields(
    p_agent tickq.agent,
    p_exists boolean,
    p_fields jsonb
) RETURNS tickq.agent
LANGUAGE plpgsql
AS $$
DECLARE
    v_agent tickq.agent := p_agent;
    v_item jsonb;
BEGIN
    IF p_fields ? 'prompt' THEN
        v_agent.prompt := tickq.agent_json_text(p_agent.name, 'prompt', p_fields -> 'prompt');
    END IF;
    v_agent := tickq.agent_schedule(v_agent, p_exists, p_fields);
    IF p_fields ? 'max_turns' THEN
        v_item := p_fields -> 'max_turns';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'number' OR (v_item #>> '{}')::numeric NOT BETWEEN 1
                AND (SELECT l.high FROM tickq.registry_limit('agents.max_turns') AS l)
            OR (v_item #>> '{}')::numeric <> trunc((v_item #>> '{}')::numeric) THEN
            PERFORM tickq.agent_error(p_agent.name, 'max_turns',
                format('turns must be a whole number from 1 to %s, got %s',
                    (SELECT l.high FROM tickq.registry_limit('agents.max_turns') AS l), left(v_item::text, 80)));
        END IF;
        v_agent.max_turns := (v_item #>> '{}')::integer;
    END IF;
    IF p_fields ? 'timeout' THEN
        v_agent.timeout := tickq.agent_json_seconds(p_agent.name, 'timeout', p_fields -> 'timeout');
    END IF;
    IF p_fields ? 'owner' THEN
        v_agent.owner := tickq.agent_json_text(p_agent.name, 'owner', p_fields -> 'owner');
    END IF;
    IF p_fields ? 'tools' THEN
        v_item := p_fields -> 'tools';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array'
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t) WHERE jsonb_typeof(e.t) <> 'string') THEN
            PERFORM tickq.agent_error(p_agent.name, 'tools',
                format('must be a list of tool names, got %s', left(v_item::text, 80)));
        END IF;
        v_agent.tools := ARRAY(SELECT e.t FROM jsonb_array_elements_text(v_item) AS e (t));
    END IF;
    IF p_fields ? 'paused' THEN
        IF jsonb_typeof(p_fields -> 'paused') IS DISTINCT FROM 'boolean' THEN
            PERFORM tickq.agent_error(p_agent.name, 'paused', 'must be true or false');
        END IF;
        v_agent.paused := (p_fields ->> 'paused')::boolean;
    END IF;

    RETURN v_agent;
END
$$;
COMMENT ON FUNCTION tickq.agent_with_fields(tickq.agent, boolean, jsonb) IS
'Internal: p_agent with the JSON fields of save_agent applied (prompt, schedule, max_turns, '
'timeout, owner, tools, paused), each judged; TQ040 naming the field and the value.';

CREATE OR REPLACE FUNCTION tickq.save_agent(
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
BEGIN
    IF jsonb_typeof(p_fields) IS DISTINCT FROM 'object' THEN
        PERFORM tickq.agent_error(p_name, '*', 'the fields must be a JSON object');
    END IF;
    FOR v_key IN SELECT jsonb_object_keys(p_fields) LOOP
        IF NOT v_key = ANY(ARRAY['prompt', 'every', 'at', 'on', 'days', 'months', 'cron', 'timezone', 'max_turns',
            'timeout', 'owner', 'tools', 'paused']) THEN
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
        IF NOT p_fields ?| ARRAY['every', 'at', 'cron'] THEN
            PERFORM tickq.agent_error(p_name, 'schedule', 'a new agent needs "every", "at" or "cron"');
        END IF;
    END IF;

    v_new := tickq.agent_with_fields(v_new, v_exists, p_fields);

    -- The triggers check the row (tickq.check_agent) and move its kind (tickq.agent_changed).
    PERFORM set_config('tickq.agent_now', p_now::text, true);
    IF v_exists THEN
        UPDATE tickq.agent AS a SET
            prompt = v_new.prompt, every = v_new.every, at_times = v_new.at_times, on_days = v_new.on_days,
            days = v_new.days, months = v_new.months, cron = v_new.cron,
            timezone = v_new.timezone, max_turns = v_new.max_turns, timeout = v_new.timeout,
            owner = v_new.owner, tools = v_new.tools, paused = v_new.paused, updated_at = p_now
        WHERE a.id = v_old.id
        RETURNING a.* INTO v_new;
    ELSE
        INSERT INTO tickq.agent AS a (
            name, prompt, every, at_times, on_days, days, months, cron, timezone, max_turns, timeout, owner, tools,
            paused, created_at, updated_at
        ) VALUES (
            v_new.name, v_new.prompt, v_new.every, v_new.at_times, v_new.on_days, v_new.days, v_new.months, v_new.cron,
            v_new.timezone,
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
'every (seconds), at ["HH:MM"] with on [weekdays, "1st mon", "last fri"], days and months, or '
'cron (five fields), with timezone; max_turns, timeout '
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

CREATE OR REPLACE FUNCTION tickq.agent_for_kind(
    p_kind text
) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT a.id FROM tickq.agent AS a WHERE 'agent.' || a.name = p_kind;
$$;
COMMENT ON FUNCTION tickq.agent_for_kind(text) IS
'The id of the agent that owns the kind p_kind ("agent.<name>"), or null. The dispatcher passes '
'this id, and nothing else of the agent, to the registry''s agent runner.';

CREATE OR REPLACE FUNCTION tickq.load_agent(
    p_id bigint
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
COMMENT ON FUNCTION tickq.load_agent(bigint) IS
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
