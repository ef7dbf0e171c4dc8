-- 0018: every bound of the registry in tickq.registry_limits, and the signatures the API files
-- replaced dropped here, so the API files hold no history.
--
-- The caps of user-built agents (turns, watchdog, retries, a tool's watchdog), the runner's own
-- database timeouts and the built-in housekeeping kind's timeout join the table: the database
-- judges each value the registry file gives, naming the key the user wrote, and the file's
-- parser keeps only the shape. A database timeout of 0 means "no timeout" to PostgreSQL and
-- libpq, so the lower bound of each is 1 second.

CREATE OR REPLACE FUNCTION tickq.registry_limits(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (key text, low numeric, high numeric, unit text)
LANGUAGE sql IMMUTABLE
AS $$
    -- Durations in seconds (unit 's'); counts and fractions as they are. A key of the [agents]
    -- section is spelled as in the file ("agents.max_turns"); a tool's key stands for every
    -- tool ("agents.tools.timeout" bounds agents.tools.NAME.timeout).
    VALUES
        ('slots', 1, 1000, ''),
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
        ('db_connect_timeout', 1, 600, 's'),
        ('db_statement_timeout', 1, 86400, 's'),
        ('db_lock_timeout', 1, 3600, 's'),
        ('every', 1, 366 * 86400, 's'),
        ('timeout', 1, 7 * 86400, 's'),
        ('agents.max_turns', 1, 6, ''),
        ('agents.timeout', 1, 600, 's'),
        ('agents.retries', 0, 10, ''),
        ('agents.deliver_timeout', 1, 300, 's'),
        ('agents.request_timeout', 1, 600, 's'),
        ('agents.http_attempts', 1, 10, ''),
        ('agents.tools.timeout', 1, 300, 's')
$$;
COMMENT ON FUNCTION tickq.registry_limits(timestamptz) IS
'The bounds of every number in the registry (durations in seconds): the one place they are '
'written. p_now is unused.';

-- The agents' caps on their rows come from the same table.
ALTER TABLE tickq.agent_settings
DROP CONSTRAINT agent_max_turns_cap,
DROP CONSTRAINT agent_max_timeout_cap,
DROP CONSTRAINT agent_retries_not_negative,
ADD CONSTRAINT agent_max_turns_cap CHECK (tickq.within_limit('agents.max_turns', max_turns)),
ADD CONSTRAINT agent_max_timeout_cap
CHECK (tickq.within_limit('agents.timeout', extract(EPOCH FROM max_timeout))),
ADD CONSTRAINT agent_retries_bounded CHECK (tickq.within_limit('agents.retries', retries));

ALTER TABLE tickq.agent_turn
DROP CONSTRAINT agent_turn_number,
ADD CONSTRAINT agent_turn_number CHECK (turn >= 1 AND tickq.within_limit('agents.max_turns', turn));

-- An agent row is held to the registry's caps alone: the caps themselves are bounded above.
CREATE OR REPLACE FUNCTION tickq.check_agent() RETURNS trigger
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
'time zone, turns and timeout within the registry''s caps (bounded by tickq.registry_limits), owner label, '
'tools the registry offers) with TQ040 (TQ043 for a tool) naming the field and the value.';

-- Signatures the API files replaced; each API file now creates only its current functions.
DROP FUNCTION IF EXISTS tickq.next_slot(interval, time[], smallint[], text, timestamptz);
DROP FUNCTION IF EXISTS tickq.slots_between(interval, time[], smallint[], text, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS tickq.describe_schedule(interval, time[], smallint[], text, timestamptz);
DROP FUNCTION IF EXISTS tickq.registry_count(jsonb, integer, text, text, timestamptz);
-- save_agent took its p_create default; sync_registry now returns its drift classified.
DROP FUNCTION IF EXISTS tickq.save_agent(text, jsonb, boolean, timestamptz);
DROP FUNCTION IF EXISTS tickq.sync_registry(jsonb, timestamptz);
