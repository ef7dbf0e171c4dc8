-- 0034: a catch-up policy per kind (catch_up = "30m"): a missed slot runs only while it is at
-- most that late; each older one is recorded as a run of outcome `skipped` (no command started:
-- one row per merge, its slot_at, first_slot_at and slots_covered naming the slots it skipped),
-- and the kind moves on (tickq.catch_up_kinds, which a claim calls when such a kind is due).
ALTER TYPE tickq.outcome ADD VALUE IF NOT EXISTS 'skipped';

ALTER TABLE tickq.job_kind ADD COLUMN IF NOT EXISTS catch_up interval;
COMMENT ON COLUMN tickq.job_kind.catch_up IS
'The registry''s catch_up: a slot later than this is skipped (a job_run row of outcome skipped), '
'not run; NULL: every missed slot is merged into one run however late.';

-- The claim's rare-case test reads this index alone: empty unless some kind has a catch_up, and
-- then only the due ones of those kinds are in its range. Not run_id: a lease would no longer be
-- a HOT update (0008), and the kinds running, at most one a slot, are few to pass over.
CREATE INDEX IF NOT EXISTS job_kind_catch_up ON tickq.job_kind (due_at)
WHERE catch_up IS NOT NULL AND enabled AND (NOT irreversible OR armed_at IS NOT NULL);

-- The worst-case windows name the month end they hold (month_end): CREATE OR REPLACE cannot
-- change a return type, so the API files create these anew.
DROP FUNCTION IF EXISTS tickq.simulation_replay_window(numeric, timestamptz);
DROP FUNCTION IF EXISTS tickq.simulation_windows(timestamptz);

-- Agents take the calendar fields and cron strings kinds take (one parser: tickq.parse_schedule).
ALTER TABLE tickq.agent ADD COLUMN IF NOT EXISTS days smallint[];
ALTER TABLE tickq.agent ADD COLUMN IF NOT EXISTS months smallint[];
ALTER TABLE tickq.agent ADD COLUMN IF NOT EXISTS cron text;
COMMENT ON COLUMN tickq.agent.days IS
'Days of the month of an at schedule (1..31, -1..-31 from the month''s end), as job_kind.days.';
COMMENT ON COLUMN tickq.agent.months IS 'Months of an at schedule (1..12), as job_kind.months.';
COMMENT ON COLUMN tickq.agent.cron IS 'A five-field cron string (or an @ form) in timezone, as job_kind.cron.';

-- The row's rules, with the new fields (nth weekdays in on, days, months, cron).
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
        (4, 'schedule', num_nonnulls(NEW.every, NEW.at_times, NEW.cron) <> 1,
            'give exactly one of every, at or cron'),
        (5, 'every', NEW.every < '1 minute'::interval OR NEW.every > '366 days'::interval,
            format('every must be from 1m to 366d, got %s', tickq.format_duration(NEW.every))),
        (6, 'at', NOT (cardinality(NEW.at_times) BETWEEN 1 AND 48),
            format('at takes 1 to 48 times of day, got %s', NEW.at_times)),
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
'Trigger: refuses an agent row that breaks a rule (name shape, prompt size, one schedule of every, '
'at (with on, days, months) or cron, known '
'time zone, turns and timeout within the registry''s caps (bounded by tickq.registry_limits), owner label, '
'tools the registry offers) with TQ040 (TQ043 for a tool) naming the field and the value.';
