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

-- Signatures the API files replaced; each API file now creates only its current functions.
DROP FUNCTION IF EXISTS tickq.next_slot(interval, time[], smallint[], text, timestamptz);
DROP FUNCTION IF EXISTS tickq.slots_between(interval, time[], smallint[], text, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS tickq.describe_schedule(interval, time[], smallint[], text, timestamptz);
DROP FUNCTION IF EXISTS tickq.registry_count(jsonb, integer, text, text, timestamptz);
-- save_agent took its p_create default; sync_registry now returns its drift classified.
DROP FUNCTION IF EXISTS tickq.save_agent(text, jsonb, boolean, timestamptz);
DROP FUNCTION IF EXISTS tickq.sync_registry(jsonb, timestamptz);
