-- 0015: user-built agents. An agent is a saved prompt on a schedule that people create at run
-- time (`tickq agent add`), without touching the registry file. Each agent owns exactly one
-- job_kind row, "agent.<name>", kept in step with the agent row by a trigger, so claims, the
-- slot limit, leases, retries and capacity treat it like any other kind. What an agent run
-- executes is the registry's agent runner with the agent's id: nothing in these rows is ever
-- executed, and the caps (six turns, ten minutes) hold for rows written by hand in psql too.

CREATE TABLE tickq.agent_settings (
    id boolean PRIMARY KEY DEFAULT true CONSTRAINT agent_settings_single_row CHECK (id),
    priority tickq.priority NOT NULL DEFAULT 'normal',
    max_turns integer NOT NULL DEFAULT 6
    CONSTRAINT agent_max_turns_cap CHECK (max_turns BETWEEN 1 AND 6),
    max_timeout interval NOT NULL DEFAULT '10 minutes'
    CONSTRAINT agent_max_timeout_cap CHECK (max_timeout > '0'::interval AND max_timeout <= '10 minutes'::interval),
    retries integer NOT NULL DEFAULT 0 CONSTRAINT agent_retries_not_negative CHECK (retries BETWEEN 0 AND 10),
    tools text[] NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.agent_settings IS
'The one row of the registry''s [agents] section as tickq.sync_registry last saw it: the lane '
'agents run in, the caps (turns at most 6, watchdog at most 10 minutes; also the defaults), '
'the retries of a failed agent run, and the names of the tools agents may be given.';
INSERT INTO tickq.agent_settings DEFAULT VALUES;

CREATE TABLE tickq.agent (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL CONSTRAINT agent_name_unique UNIQUE,
    prompt text NOT NULL,
    every interval,
    at_times time[],
    on_days smallint[],
    timezone text NOT NULL DEFAULT 'UTC',
    max_turns integer NOT NULL DEFAULT 6,
    timeout interval NOT NULL DEFAULT '10 minutes',
    owner text,
    tools text[] NOT NULL DEFAULT '{}',
    paused boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.agent IS
'One row per user-built agent: a prompt (data the agent runner reads, never a command), a '
'schedule (every, or at_times/on_days in timezone), its turn and time limits within the caps of '
'tickq.agent_settings, an owner label and the registry tools it may use. Its queue row is the '
'job_kind "agent.<name>", created, rescheduled, paused and retired by triggers on this table.';

-- A run's transcript: one row per model call (turn), bounded, deleted with its run.
CREATE DOMAIN tickq.agent_turn_entry AS jsonb
CONSTRAINT agent_turn_entry_bounded CHECK (octet_length(value::text) <= 32768);
COMMENT ON DOMAIN tickq.agent_turn_entry IS
'agent_turn.entry: one turn of an agent run as JSON, at most 32 KiB of text.';

CREATE TABLE tickq.agent_turn (
    run_id bigint NOT NULL REFERENCES tickq.job_run (id) ON DELETE CASCADE,
    turn integer NOT NULL CONSTRAINT agent_turn_number CHECK (turn BETWEEN 1 AND 6),
    recorded_at timestamptz NOT NULL,
    entry tickq.agent_turn_entry NOT NULL,
    PRIMARY KEY (run_id, turn)
);
COMMENT ON TABLE tickq.agent_turn IS
'The transcript of agent runs: per turn the request summary, the tool calls with their '
'arguments and output tails, the answer and the token counts the server reported. At most six '
'turns of 32 KiB per run; pruned with the run by housekeeping.';

-- The rules of an agent row, whoever writes it. The error names the field and the value.
CREATE FUNCTION tickq.check_agent() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_caps tickq.agent_settings;
    v_field text;
    v_problem text;
BEGIN
    SELECT * INTO STRICT v_caps FROM tickq.agent_settings;
    SELECT r.field, r.problem INTO v_field, v_problem
    FROM (VALUES
        (1, 'name', NEW.name IS NULL OR NEW.name !~ '^[a-z0-9][a-z0-9_-]{0,62}$',
            format('an agent name is 1-63 characters of a-z 0-9 _ - starting with a letter or digit, got %s',
                coalesce(quote_literal(left(NEW.name, 80)), 'null'))),
        (2, 'name', TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name,
            format('an agent keeps its name (%s); remove it and add it again under %s',
                quote_literal(OLD.name), quote_literal(left(NEW.name, 80)))),
        (3, 'prompt', NEW.prompt IS NULL OR btrim(NEW.prompt) = '' OR char_length(NEW.prompt) > 32768,
            format('a prompt is 1 to 32768 characters, not blank, got %s characters',
                coalesce(char_length(NEW.prompt), 0))),
        (4, 'schedule', (NEW.every IS NULL) = (NEW.at_times IS NULL),
            'give exactly one of every or at'),
        (5, 'every', NEW.every < '1 minute'::interval OR NEW.every > '366 days'::interval,
            format('every must be from 1m to 366d, got %s', tickq.format_duration(NEW.every))),
        (6, 'at', NOT (cardinality(NEW.at_times) BETWEEN 1 AND 48),
            format('at takes 1 to 48 times of day, got %s', NEW.at_times)),
        (7, 'on', NEW.on_days IS NOT NULL AND (NEW.at_times IS NULL OR NOT (cardinality(NEW.on_days) >= 1
            AND NEW.on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[])),
            format('on takes weekdays 1-7 (mon-sun) with an at schedule, got %s', NEW.on_days)),
        (8, 'timezone', NOT tickq.is_timezone(NEW.timezone),
            format('unknown time zone %s (use an IANA name such as America/Chicago)',
                coalesce(quote_literal(left(NEW.timezone, 80)), 'null'))),
        (9, 'timezone', NEW.every IS NOT NULL AND NEW.timezone <> 'UTC',
            format('only an at schedule takes a time zone, got %s', quote_literal(NEW.timezone))),
        (10, 'max_turns', NEW.max_turns IS NULL OR NOT NEW.max_turns BETWEEN 1 AND least(6, v_caps.max_turns),
            format('turns must be from 1 to %s (the registry''s cap), got %s',
                least(6, v_caps.max_turns), coalesce(NEW.max_turns::text, 'null'))),
        (11, 'timeout', NEW.timeout IS NULL OR NEW.timeout < '1 second'::interval
            OR NEW.timeout > least('10 minutes'::interval, v_caps.max_timeout),
            format('timeout must be from 1s to %s (the registry''s cap), got %s',
                tickq.format_duration(least('10 minutes'::interval, v_caps.max_timeout)),
                coalesce(tickq.format_duration(NEW.timeout), 'null'))),
        (12, 'owner', NEW.owner IS NOT NULL AND (NEW.owner !~ '^[[:print:]]{1,100}$' OR btrim(NEW.owner) = ''),
            format('an owner label is 1 to 100 printable characters, got %s',
                quote_literal(left(NEW.owner, 120)))),
        (13, 'tools', NEW.tools IS NULL OR cardinality(NEW.tools) > 32 OR EXISTS (
            SELECT FROM unnest(NEW.tools) AS t (tool) WHERE t.tool IS NULL OR t.tool !~ '^[a-z0-9][a-z0-9_-]{0,62}$')
            OR cardinality(NEW.tools) <> (SELECT count(DISTINCT t.tool) FROM unnest(NEW.tools) AS t (tool)),
            format('tools are up to 32 distinct tool names (a-z 0-9 _ -), got %s', NEW.tools)),
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
'Trigger: refuses an agent row that breaks a rule (name shape, prompt size, one schedule, known '
'time zone, turns 1..6 and timeout up to 10 minutes within the registry''s caps, owner label, '
'tools the registry offers) with TQ040 (TQ043 for a tool) naming the field and the value.';

CREATE TRIGGER agent_valid
BEFORE INSERT OR UPDATE ON tickq.agent
FOR EACH ROW EXECUTE FUNCTION tickq.check_agent();

-- The agent's queue row follows the agent row (tickq.apply_agent_kind in sql/api/09_agents.sql).
CREATE FUNCTION tickq.agent_changed() RETURNS trigger
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

CREATE TRIGGER agent_kind_follows
AFTER INSERT OR UPDATE OR DELETE ON tickq.agent
FOR EACH ROW EXECUTE FUNCTION tickq.agent_changed();
