-- The registry's [agents] section (the lane, the caps and the tools of user-built agents) and the
-- queue row each agent owns, written by the same writer as a registry kind (tickq.write_kind).

CREATE OR REPLACE FUNCTION tickq.parse_agents(
    p_agents jsonb
) RETURNS tickq.agent_settings
LANGUAGE plpgsql
AS $$
DECLARE
    v_new tickq.agent_settings;
    v_key text;
    v_item jsonb;
    v_tool text;
BEGIN
    IF jsonb_typeof(p_agents) <> 'object' THEN
        PERFORM tickq.registry_error(NULL, 'agents', 'must be a table');
    END IF;
    -- Absent keys take their defaults: the registry alone decides the agents' bounds, and the
    -- caps of tickq.registry_limits are the defaults.
    v_new.id := true;
    v_new.priority := 'normal';
    v_new.max_turns := (SELECT l.high FROM tickq.registry_limit('agents.max_turns') AS l);
    v_new.max_timeout := make_interval(secs => (SELECT l.high FROM tickq.registry_limit('agents.timeout') AS l)::double precision);
    v_new.retries := 0;
    v_new.weight := 1;
    v_new.tools := '{}';
    FOR v_key IN SELECT jsonb_object_keys(p_agents) ORDER BY 1 LOOP
        v_item := p_agents -> v_key;
        CASE v_key
            WHEN 'priority' THEN
                IF jsonb_typeof(v_item) <> 'string'
                    OR NOT (v_item #>> '{}') = ANY(enum_range(NULL::tickq.priority)::text[]) THEN
                    PERFORM tickq.registry_error(NULL, 'agents.priority',
                        format('must be one of urgent, high, normal, low, got %s', left(v_item::text, 200)));
                END IF;
                v_new.priority := (v_item #>> '{}')::tickq.priority;
            WHEN 'max_turns' THEN
                v_new.max_turns := tickq.registry_count(v_item, NULL, 'agents.max_turns');
            WHEN 'timeout' THEN
                v_new.max_timeout := tickq.registry_seconds(v_item, NULL, 'agents.timeout');
            WHEN 'retries' THEN
                v_new.retries := tickq.registry_count(v_item, NULL, 'agents.retries');
            WHEN 'weight' THEN
                -- at most settings.slots: a rule between keys (tickq.weight_problems)
                v_new.weight := tickq.registry_count(v_item, NULL, 'agents.weight');
            WHEN 'http_attempts' THEN
                -- Read by the runner alone; judged here with every other bound.
                PERFORM tickq.registry_count(v_item, NULL, 'agents.http_attempts');
            WHEN 'deliver_timeout', 'request_timeout' THEN
                PERFORM tickq.registry_seconds(v_item, NULL, 'agents.' || v_key);
            WHEN 'tool_timeouts' THEN
                IF jsonb_typeof(v_item) <> 'object' THEN
                    PERFORM tickq.registry_error(NULL, 'agents.tools', 'must be a table of tools');
                END IF;
                FOR v_tool IN SELECT jsonb_object_keys(v_item) ORDER BY 1 LOOP
                    PERFORM tickq.registry_seconds(v_item -> v_tool, NULL, 'agents.tools.' || v_tool || '.timeout');
                END LOOP;
            WHEN 'tools' THEN
                IF jsonb_typeof(v_item) <> 'array' OR EXISTS (
                    SELECT FROM jsonb_array_elements(v_item) AS e (t)
                    WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^[a-z0-9][a-z0-9_-]{0,62}$') THEN
                    PERFORM tickq.registry_error(NULL, 'agents.tools',
                        format('must be a list of tool names, got %s', left(v_item::text, 200)));
                END IF;
                v_new.tools := ARRAY(SELECT DISTINCT e.t FROM jsonb_array_elements_text(v_item) AS e (t) ORDER BY 1);
            ELSE
                -- The endpoint, model, key name, runner and tool commands stay in the registry
                -- file: the database never holds them.
                NULL;
        END CASE;
    END LOOP;
    RETURN v_new;
END
$$;
COMMENT ON FUNCTION tickq.parse_agents(jsonb) IS
'The registry''s "agents" object as a tickq.agent_settings row (priority, max_turns, timeout, '
'retries and weight within tickq.registry_limits, tool names; absent keys take the defaults), the runner''s '
'own bounds (deliver_timeout, request_timeout, http_attempts, tool_timeouts) judged too. TQ002 '
'naming the key as the file spells it (agents.max_turns, agents.tools.NAME.timeout).';

CREATE OR REPLACE FUNCTION tickq.sync_agents(
    p_agents jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_old tickq.agent_settings;
    v_new tickq.agent_settings;
    v_agent tickq.agent;
    v_has boolean := coalesce(jsonb_typeof(p_agents), 'null') <> 'null';
BEGIN
    -- A registry that says nothing about agents (no section at all) changes nothing of them: it
    -- may be another host's registry beside one that has [agents], and its dispatcher leaves
    -- agent runs to that one (tickq.claim_jobs). An empty section means the defaults.
    -- Whether the registry the queue is synced with can run agents (tickq.claim_jobs).
    UPDATE tickq.settings AS s SET agents = v_has WHERE s.agents IS DISTINCT FROM v_has;
    IF NOT v_has THEN
        RETURN;
    END IF;
    v_new := tickq.parse_agents(p_agents);
    SELECT * INTO STRICT v_old FROM tickq.agent_settings FOR UPDATE;
    IF (v_new.priority, v_new.max_turns, v_new.max_timeout, v_new.retries, v_new.tools, v_new.weight)
        IS NOT DISTINCT FROM (v_old.priority, v_old.max_turns, v_old.max_timeout, v_old.retries, v_old.tools,
            v_old.weight) THEN
        RETURN;
    END IF;
    UPDATE tickq.agent_settings AS s SET
        priority = v_new.priority, max_turns = v_new.max_turns, max_timeout = v_new.max_timeout,
        retries = v_new.retries, tools = v_new.tools, weight = v_new.weight, updated_at = p_now;
    -- Each agent's kind takes the new lane, retries, weight and (capped) timeout.
    FOR v_agent IN SELECT * FROM tickq.agent AS a ORDER BY a.name LOOP
        PERFORM tickq.apply_agent_kind(v_agent, false, p_now);
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.sync_agents(jsonb, timestamptz) IS
'Called by tickq.sync_registry with the registry''s "agents" object: sets tickq.agent_settings '
'(tickq.parse_agents) and moves every agent''s kind to the new lane, retries and capped timeout. '
'No object (a registry without an [agents] section) changes nothing of them. Records in '
'tickq.settings.agents whether the registry has the section.';

CREATE OR REPLACE FUNCTION tickq.apply_agent_kind(
    p_agent tickq.agent,
    p_reschedule boolean,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_caps tickq.agent_settings;
    v_kind tickq.job_kind;
BEGIN
    SELECT * INTO STRICT v_caps FROM tickq.agent_settings;
    v_kind.name := 'agent.' || p_agent.name;
    IF EXISTS (SELECT FROM tickq.job_kind AS k
        WHERE k.name = v_kind.name AND NOT k.registry ? 'agent' AND k.retired_at IS NULL) THEN
        PERFORM tickq.agent_error(p_agent.name, 'name',
            format('the registry already has a kind named %s', quote_literal(v_kind.name)));
    END IF;
    -- A mirror for psql readers; the command of an agent run comes from the registry file.
    v_kind.registry := jsonb_strip_nulls(jsonb_build_object('agent', p_agent.id, 'owner', p_agent.owner));
    v_kind := tickq.with_schedule(v_kind, tickq.schedule_of(p_agent));
    -- The registry may have lowered its cap since the agent was saved: the lower one holds.
    v_kind.timeout := least(p_agent.timeout, v_caps.max_timeout);
    v_kind.priority := v_caps.priority;
    v_kind.retries := v_caps.retries;
    v_kind.weight := v_caps.weight;
    v_kind.enabled := NOT p_agent.paused;
    v_kind.irreversible := false;
    -- The lease must cover the new timeout before the kind carries it (checked at commit).
    UPDATE tickq.settings AS s SET lease = v_kind.timeout + s.lease_margin
    WHERE s.lease < v_kind.timeout + s.lease_margin;
    PERFORM tickq.write_kind(v_kind, p_reschedule, false, p_now);
END
$$;
COMMENT ON FUNCTION tickq.apply_agent_kind(tickq.agent, boolean, timestamptz) IS
'Internal: creates or updates the job_kind "agent.<name>" of an agent (schedule, timeout within '
'the registry''s cap, the agents'' lane and retries, enabled unless paused) through '
'tickq.write_kind, raising the lease when the timeout needs it; p_reschedule moves it to its next '
'slot after p_now.';

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
