-- What `tickq agent list/show/history` and the simulator read of user-built agents: read-only.

CREATE OR REPLACE FUNCTION tickq.agents_at() RETURNS TABLE (
    id bigint, name text, schedule text, state text, max_turns integer, timeout interval, owner text,
    tools text[], next_due_at timestamptz, last_outcome tickq.outcome, last_finished_at timestamptz
)
LANGUAGE sql STABLE
AS $$
    SELECT a.id, a.name,
        tickq.describe_schedule(tickq.schedule_of(a)),
        CASE WHEN a.paused THEN 'paused' WHEN k.run_id IS NOT NULL THEN 'running' ELSE 'scheduled' END,
        a.max_turns, a.timeout, a.owner, a.tools,
        CASE WHEN k.enabled THEN k.due_at END,
        r.outcome, r.finished_at
    FROM tickq.agent AS a
    LEFT JOIN tickq.job_kind AS k ON k.name = 'agent.' || a.name
    LEFT JOIN tickq.job_run AS r ON r.id = k.last_run_id
    ORDER BY a.name
$$;
COMMENT ON FUNCTION tickq.agents_at() IS
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
BEGIN
    SELECT * INTO v_agent FROM tickq.agent AS a WHERE a.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no agent %', quote_literal(p_name) USING ERRCODE = 'TQ041',
            HINT = 'tickq agent list shows the agents.';
    END IF;
    RETURN QUERY SELECT n.slot, n.slot AT TIME ZONE v_agent.timezone, v_agent.timezone
    FROM tickq.next_slots(tickq.schedule_of(v_agent), least(p_count, 100), p_now) AS n (slot);
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

CREATE OR REPLACE FUNCTION tickq.agent_entry(
    p_agent tickq.agent
) RETURNS jsonb
LANGUAGE sql STABLE
AS $$
    -- An agent as the fields tickq.save_agent takes (the schedule as tickq.parse_schedule reads it).
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'prompt', p_agent.prompt,
        'max_turns', p_agent.max_turns,
        'timeout', extract(EPOCH FROM p_agent.timeout)::bigint,
        'paused', p_agent.paused
    )) || tickq.schedule_entry(tickq.schedule_of(p_agent))
$$;
COMMENT ON FUNCTION tickq.agent_entry(tickq.agent) IS
'An agent as the JSON fields tickq.save_agent takes: prompt, its schedule (tickq.schedule_entry: every, '
'or at with on, days and months, or cron, with timezone), max_turns, timeout, paused.';

CREATE OR REPLACE FUNCTION tickq.agents_export() RETURNS TABLE (name text, fields jsonb)
LANGUAGE sql STABLE
AS $$
    -- What tickq.save_agent takes, per agent: `check` and `simulate` load the queue's agents
    -- into their scratch database with it, so agents take slots there too.
    SELECT a.name, tickq.agent_entry(a)
    FROM tickq.agent AS a
    ORDER BY a.name
$$;
COMMENT ON FUNCTION tickq.agents_export() IS
'Every agent''s saved fields as tickq.save_agent takes them (for the simulator''s scratch queue).';

CREATE OR REPLACE FUNCTION tickq.agent_detail(
    p_name text
) RETURNS TABLE (
    id bigint, name text, schedule text, state text, max_turns integer, timeout_s integer, owner text,
    tools text[], next_due_at timestamptz, last_outcome tickq.outcome, last_finished_at timestamptz,
    prompt text, timezone text
)
LANGUAGE sql STABLE
AS $$
    SELECT a.id, a.name, a.schedule, a.state, a.max_turns, extract(EPOCH FROM a.timeout)::integer,
        a.owner, a.tools, a.next_due_at, a.last_outcome, a.last_finished_at, g.prompt, g.timezone
    FROM tickq.agents_at() AS a
    INNER JOIN tickq.agent AS g ON a.id = g.id
    WHERE a.name = p_name
$$;
COMMENT ON FUNCTION tickq.agent_detail(text) IS
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
