-- What an agent's row must be: the bodies of the triggers on tickq.agent, tickq.check_agent and
-- tickq.agent_changed (the triggers themselves are the baseline migration's). An edit in psql
-- is held to the same rules as `tickq agent add`. The bounds it checks are rows of
-- tickq.registry_limits: agent.* for the agent row's own fields, and the [agents] caps
-- (agents.max_turns, agents.timeout) through tickq.agent_settings.

CREATE OR REPLACE FUNCTION tickq.check_agent() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_caps tickq.agent_settings;
    v_every numrange;
    v_at numrange;
    v_tools numrange;
    v_prompt numrange;
    v_field text;
    v_problem text;
BEGIN
    SELECT * INTO STRICT v_caps FROM tickq.agent_settings;
    -- An agent row's own bounds: rows agent.* of the one table of bounds.
    SELECT range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.every')),
        range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.at')),
        range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.tools')),
        range_merge(range_agg(numrange(l.low, l.high, '[]')) FILTER (WHERE l.key = 'agent.prompt'))
    INTO STRICT v_every, v_at, v_tools, v_prompt
    FROM tickq.registry_limits() AS l WHERE l.key LIKE 'agent.%';
    SELECT r.field, r.problem INTO v_field, v_problem
    FROM (VALUES
        (1, 'name', NEW.name IS NULL OR NEW.name !~ '^[a-z0-9][a-z0-9_-]{0,62}$',
            format('an agent name is 1-63 characters of a-z 0-9 _ - starting with a letter or digit, got %s',
                coalesce(quote_literal(left(NEW.name, 80)), 'null'))),
        (2, 'name', TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name,
            format('an agent keeps its name (%s); remove it and add it again under %s',
                quote_literal(OLD.name), quote_literal(left(NEW.name, 80)))),
        (3, 'prompt', NEW.prompt IS NULL OR btrim(NEW.prompt) = '' OR NOT char_length(NEW.prompt)::numeric <@ v_prompt,
            format('a prompt is %s to %s characters, not blank, got %s characters',
                lower(v_prompt), upper(v_prompt), coalesce(char_length(NEW.prompt), 0))),
        (4, 'schedule', num_nonnulls(NEW.every, NEW.at_times, NEW.cron) <> 1,
            'give exactly one of every, at or cron'),
        (5, 'every', NOT extract(EPOCH FROM NEW.every) <@ v_every,
            format('every must be from %s to %s, got %s', tickq.format_duration(make_interval(secs => lower(v_every))),
                tickq.format_duration(make_interval(secs => upper(v_every))), tickq.format_duration(NEW.every))),
        (6, 'at', NOT cardinality(NEW.at_times)::numeric <@ v_at,
            format('at takes %s to %s times of day, got %s', lower(v_at), upper(v_at), NEW.at_times)),
        (7, 'on', NEW.on_days IS NOT NULL AND (NEW.at_times IS NULL OR NOT cardinality(NEW.on_days) >= 1
            OR EXISTS (SELECT FROM unnest(NEW.on_days) AS d (day) WHERE d.day IS NULL
                OR NOT (d.day BETWEEN 1 AND 7 OR d.day % 10 BETWEEN 1 AND 7 AND d.day / 10 IN (1, 2, 3, 4, 5, 9)))),
            format('on takes weekdays (1-7: mon-sun, 10n+1..7: nth, 91-97: last) with an at schedule, got %s',
                NEW.on_days)),
        (15, 'days', NEW.days IS NOT NULL AND (NEW.at_times IS NULL OR NOT cardinality(NEW.days) >= 1
            OR EXISTS (SELECT FROM unnest(NEW.days) AS d (day) WHERE d.day IS NULL OR d.day = 0
                OR NOT d.day BETWEEN -31 AND 31)),
            format('days takes days of the month 1 to 31 or -1 to -31 with an at schedule, got %s', NEW.days)),
        (16, 'months', NEW.months IS NOT NULL AND (NEW.at_times IS NULL OR NOT cardinality(NEW.months) >= 1
            OR EXISTS (SELECT FROM unnest(NEW.months) AS m (month) WHERE m.month IS NULL OR NOT m.month BETWEEN 1 AND 12)),
            format('months takes months 1 to 12 with an at schedule, got %s', NEW.months)),
        (17, 'cron', CASE WHEN NEW.cron IS NOT NULL THEN tickq.cron_problem(NEW.cron) IS NOT NULL ELSE false END,
            CASE WHEN NEW.cron IS NOT NULL THEN tickq.cron_problem(NEW.cron) END),
        (8, 'timezone', NOT tickq.is_timezone(NEW.timezone),
            format('unknown time zone %s (use an IANA name such as America/Chicago)',
                coalesce(quote_literal(left(NEW.timezone, 80)), 'null'))),
        (9, 'timezone', NEW.every IS NOT NULL AND NEW.timezone <> 'UTC',
            format('only an at or cron schedule takes a time zone, got %s', quote_literal(NEW.timezone))),
        (10, 'max_turns', NEW.max_turns IS NULL OR NOT NEW.max_turns BETWEEN 1 AND v_caps.max_turns,
            format('turns must be from 1 to %s (the registry''s cap), got %s',
                v_caps.max_turns, coalesce(NEW.max_turns::text, 'null'))),
        (11, 'timeout', NEW.timeout IS NULL OR NEW.timeout < '1 second'::interval
            OR NEW.timeout > v_caps.max_timeout,
            format('timeout must be from 1s to %s (the registry''s cap), got %s',
                tickq.format_duration(v_caps.max_timeout),
                coalesce(tickq.format_duration(NEW.timeout), 'null'))),
        (12, 'owner', NEW.owner IS NOT NULL AND (NEW.owner !~ '^[[:print:]]{1,100}$' OR btrim(NEW.owner) = ''),
            format('an owner label is 1 to 100 printable characters, got %s',
                quote_literal(left(NEW.owner, 120)))),
        (13, 'tools', NEW.tools IS NULL OR NOT cardinality(NEW.tools)::numeric <@ v_tools OR EXISTS (
            SELECT FROM unnest(NEW.tools) AS t (tool) WHERE t.tool IS NULL OR t.tool !~ '^[a-z0-9][a-z0-9_-]{0,62}$')
            OR NOT tickq.each_once(NEW.tools),
            format('tools are up to %s distinct tool names (a-z 0-9 _ -), got %s', upper(v_tools), NEW.tools)),
        (14, 'tools', (TG_OP = 'INSERT' OR NEW.tools IS DISTINCT FROM OLD.tools)
            AND NOT NEW.tools <@ v_caps.tools,
            format('the registry''s [agents.tools] has no tool %s (it offers %s)',
                (SELECT string_agg(quote_literal(t.tool), ', ') FROM unnest(NEW.tools) AS t (tool)
                    WHERE NOT t.tool = ANY(v_caps.tools)),
                coalesce(nullif(array_to_string(v_caps.tools, ', '), ''), 'none')))
    ) AS r (n, field, broken, problem)
    WHERE r.broken
    ORDER BY r.n
    LIMIT 1;
    IF v_field IS NOT NULL THEN
        RAISE EXCEPTION 'agent %: %: %', coalesce(quote_literal(left(NEW.name, 80)), 'null'), v_field, v_problem
            USING ERRCODE = CASE WHEN v_field = 'tools' AND v_problem LIKE 'the registry%' THEN 'TQ043'
                ELSE 'TQ040' END,
            DETAIL = format('field %s of tickq.agent', v_field),
            HINT = 'Nothing was changed; tickq agent add --help lists the limits.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_agent() IS
'Trigger: refuses an agent row that breaks a rule (name shape, prompt size, one schedule of every, '
'at (with on, days, months) or cron, known '
'time zone, turns and timeout within the registry''s caps, owner label, tools the registry offers; '
'every, the count of at times and of tools and the prompt''s length within the rows agent.* of '
'tickq.registry_limits, the caps within agents.*) with TQ040 (TQ043 for a tool) naming the field and the value.';

CREATE OR REPLACE FUNCTION tickq.agent_changed() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz;
BEGIN
    -- The agent functions pass their p_now down in tickq.agent_now (transaction-local); an edit
    -- in psql uses the clock.
    v_now := coalesce(nullif(current_setting('tickq.agent_now', true), '')::timestamptz, now());
    IF TG_OP = 'DELETE' THEN
        PERFORM tickq.retire_agent_kind(OLD.name, v_now);
        RETURN OLD;
    END IF;
    PERFORM tickq.apply_agent_kind(NEW, TG_OP = 'INSERT'
        OR (NEW.every, NEW.at_times, NEW.on_days, NEW.timezone, NEW.paused)
            IS DISTINCT FROM (OLD.every, OLD.at_times, OLD.on_days, OLD.timezone, OLD.paused), v_now);
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.agent_changed() IS
'Trigger: keeps the agent''s job_kind "agent.<name>" in step with the agent row (created, '
'rescheduled, paused, retired when the agent is deleted).';
