-- What kinds and user-built agents share: one parser of a schedule (every/offset, or at/on/timezone)
-- and one writer of a job_kind row, so a kind from the registry and an agent's kind are held to
-- the same rules and land in the queue the same way.

CREATE OR REPLACE FUNCTION tickq.registry_no_repeats(
    p_values anyarray,
    p_item jsonb,
    p_kind text,
    p_key text,
    p_what text
) RETURNS anyarray
LANGUAGE plpgsql
AS $$
BEGIN
    -- p_values: the values of the list p_item as read, one per element, none NULL (each judged
    -- before). A repeat is refused, never merged: the file says something it cannot mean.
    IF NOT tickq.each_once(p_values) THEN
        PERFORM tickq.registry_error(p_kind, p_key, format('%s must not repeat, got %s', p_what, p_item));
    END IF;
    RETURN ARRAY(SELECT DISTINCT u.v FROM unnest(p_values) AS u (v) ORDER BY 1);
END
$$;
COMMENT ON FUNCTION tickq.registry_no_repeats(anyarray, jsonb, text, text, text) IS
'The values of a registry list (on, days, months, at, pools) sorted, each once; TQ002 naming kind '
'and key ("<p_what> must not repeat, got <p_item>") when one stands twice. The one rule behind '
'tickq.parse_days, parse_schedule and parse_weight.';

CREATE OR REPLACE FUNCTION tickq.parse_days(
    p_name text,
    p_entry jsonb
) RETURNS tickq.job_kind
LANGUAGE plpgsql
AS $$
DECLARE
    -- Only the day filters are set: on_days (weekdays, nth and last weekdays), days, months.
    v_kind tickq.job_kind;
    v_item jsonb;
    v_days smallint[];  -- of on, each entry's days in turn (a repeat is a day twice)
    v_nth integer := (SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'on.nth');
    v_day_names constant text[] := ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    v_months constant text[] := ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep',
        'oct', 'nov', 'dec'];
BEGIN
    IF p_entry ? 'on' THEN
        v_item := p_entry -> 'on';
        -- Each entry's days: "mon" (1..7), a range "mon-fri" (each day of it; past sunday it
        -- wraps: "fri-mon"), "1st mon" .. "5th mon" (10 * n + day), "last fri" (90 + day); a
        -- NULL day for an entry that is none of these.
        SELECT array_agg(d.day) INTO v_days
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v_item) = 'array' THEN v_item END) AS e (d)
        CROSS JOIN LATERAL (SELECT e.d #>> '{}' AS t, array_position(v_day_names, left(e.d #>> '{}', 3)) AS a,
            array_position(v_day_names, right(e.d #>> '{}', 3)) AS b) AS w
        CROSS JOIN LATERAL unnest(CASE
                WHEN jsonb_typeof(e.d) <> 'string' THEN ARRAY[NULL::integer]
                WHEN w.t ~ '^[a-z]{3}$' THEN ARRAY[w.a]
                WHEN w.t ~ '^[a-z]{3}-[a-z]{3}$' AND w.a IS NOT NULL AND w.b IS NOT NULL
                    THEN ARRAY(SELECT (i - 1) % 7 + 1 FROM generate_series(w.a, w.b + CASE WHEN w.b < w.a THEN 7 ELSE 0 END) AS i)
                WHEN w.t ~ '^last [a-z]{3}$' THEN ARRAY[90 + w.b]
                WHEN w.t ~ '^[0-9](st|nd|rd|th) [a-z]{3}$'
                    AND left(w.t, 1)::integer BETWEEN 1 AND v_nth
                    AND substr(w.t, 2, 2) = (ARRAY['st', 'nd', 'rd', 'th', 'th', 'th', 'th', 'th', 'th'])[
                        greatest(left(w.t, 1)::integer, 1)]
                    THEN ARRAY[10 * left(w.t, 1)::integer + w.b]
                ELSE ARRAY[NULL::integer]
            END::smallint[]) AS d (day);
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR v_days IS NULL OR array_position(v_days, NULL) IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, 'on',
                format('must be a list of weekdays (mon tue wed thu fri sat sun), ranges of them (mon-fri), '
                    'nth weekdays (1st mon .. %sth sun) or last weekdays (last fri), got %s', v_nth,
                    left(v_item::text, 200)));
        END IF;
        v_kind.on_days := tickq.registry_no_repeats(v_days, v_item, p_name, 'on', 'days');
    END IF;
    IF p_entry ? 'days' THEN
        v_item := p_entry -> 'days';
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (d)
                WHERE CASE WHEN jsonb_typeof(e.d) <> 'number' THEN true
                    ELSE (e.d #>> '{}')::numeric = 0 OR (e.d #>> '{}')::numeric <> trunc((e.d #>> '{}')::numeric)
                        OR NOT tickq.within_limit('days', (e.d #>> '{}')::numeric) END) THEN
            PERFORM tickq.registry_error(p_name, 'days',
                format('must be a list of days of the month, 1 to 31 or -1 (the last day) to -31, got %s',
                    left(v_item::text, 200)));
        END IF;
        v_kind.days := tickq.registry_no_repeats(
            ARRAY(SELECT (e.d #>> '{}')::smallint FROM jsonb_array_elements(v_item) AS e (d)), v_item, p_name, 'days', 'days');
    END IF;
    IF p_entry ? 'months' THEN
        v_item := p_entry -> 'months';
        SELECT array_agg(CASE WHEN jsonb_typeof(e.m) = 'string' THEN array_position(v_months, e.m #>> '{}')
                WHEN jsonb_typeof(e.m) = 'number' AND tickq.within_limit('months', (e.m #>> '{}')::numeric)
                    AND (e.m #>> '{}')::numeric = trunc((e.m #>> '{}')::numeric) THEN (e.m #>> '{}')::integer
            END::smallint) INTO v_kind.months
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(v_item) = 'array' THEN v_item END) AS e (m);
        IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
            OR EXISTS (SELECT FROM unnest(v_kind.months) AS m (month) WHERE m.month IS NULL) THEN
            PERFORM tickq.registry_error(p_name, 'months',
                format('must be a list of months, jan .. dec or 1 to 12, got %s', left(v_item::text, 200)));
        END IF;
        v_kind.months := tickq.registry_no_repeats(v_kind.months, v_item, p_name, 'months', 'months');
    END IF;
    RETURN v_kind;
END
$$;
COMMENT ON FUNCTION tickq.parse_days(text, jsonb) IS
'The day filters of a calendar entry: on (weekdays, ranges "mon-fri" and "fri-mon", "1st mon" .. "5th sun", '
'"last fri"), days (1..31, '
'-1..-31 from the month''s end), months (names or 1..12); no repeats. Returns a job_kind row holding '
'only on_days, days and months; raises TQ002 naming p_name and the key.';

CREATE OR REPLACE FUNCTION tickq.parse_zone(
    p_name text,
    p_entry jsonb,
    p_default_timezone text
) RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    v_zone text := coalesce(p_entry ->> 'timezone', p_default_timezone);
BEGIN
    IF (p_entry ? 'timezone' AND jsonb_typeof(p_entry -> 'timezone') <> 'string')
        OR NOT tickq.is_timezone(v_zone) THEN
        PERFORM tickq.registry_error(p_name, 'timezone',
            tickq.unknown_zone(coalesce(p_entry -> 'timezone', to_jsonb(v_zone))));
    END IF;
    -- Only a zone the entry names: a kind that names none takes the settings' zone, judged there.
    IF p_entry ? 'timezone' AND tickq.legacy_zone_problem(v_zone) IS NOT NULL THEN
        PERFORM tickq.registry_error(p_name, 'timezone', tickq.legacy_zone_problem(v_zone));
    END IF;
    RETURN v_zone;
END
$$;
COMMENT ON FUNCTION tickq.parse_zone(text, jsonb, text) IS
'The zone of a calendar or cron entry (p_default_timezone when it names none), or TQ002 naming '
'the key timezone.';

CREATE OR REPLACE FUNCTION tickq.parse_schedule(
    p_name text,
    p_entry jsonb,
    p_default_timezone text
) RETURNS tickq.schedule
LANGUAGE plpgsql
AS $$
DECLARE
    v_schedule tickq.schedule;
    v_item jsonb;
    v_key text;
BEGIN
    IF p_entry ? 'cron' THEN
        IF p_entry ?| ARRAY['every', 'at'] THEN
            PERFORM tickq.registry_error(p_name, 'cron', 'give exactly one of "every", "at" or "cron"');
        END IF;
        SELECT k.key INTO v_key FROM unnest(ARRAY['on', 'days', 'months', 'offset']) AS k (key)
        WHERE p_entry ? k.key LIMIT 1;
        IF v_key IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, v_key, 'a cron string holds its own days and times: '
                'write them in it, or use "at" with this key');
        END IF;
        IF jsonb_typeof(p_entry -> 'cron') <> 'string' OR tickq.cron_problem(p_entry ->> 'cron') IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, 'cron', coalesce(tickq.cron_problem(p_entry ->> 'cron'),
                format('must be a string of five fields, got %s', left((p_entry -> 'cron')::text, 200))));
        END IF;
        v_schedule.cron := p_entry ->> 'cron';
        v_schedule.timezone := tickq.parse_zone(p_name, p_entry, p_default_timezone);
        IF tickq.next_slot(v_schedule, '2000-01-01Z') IS NULL THEN
            PERFORM tickq.registry_error(p_name, 'cron',
                format('%s names no date that exists (such as the 30th of February)', p_entry -> 'cron'));
        END IF;
        RETURN v_schedule;
    END IF;
    IF (p_entry ? 'every') = (p_entry ? 'at') THEN
        PERFORM tickq.registry_error(p_name, 'every', 'give exactly one of "every" or "at"');
    END IF;
    IF p_entry ? 'every' THEN
        SELECT k.key INTO v_key FROM unnest(ARRAY['on', 'days', 'months', 'timezone']) AS k (key)
        WHERE p_entry ? k.key LIMIT 1;
        IF v_key IS NOT NULL THEN
            PERFORM tickq.registry_error(p_name, v_key, 'only a calendar schedule ("at") takes this key');
        END IF;
        v_schedule.every := tickq.registry_seconds(p_entry -> 'every', p_name, 'every');
        v_schedule.timezone := 'UTC';
        -- The slots of the cadence shifted by the offset; 0 is no shift, stored as NULL.
        IF p_entry ? 'offset' THEN
            IF jsonb_typeof(p_entry -> 'offset') <> 'number' OR (p_entry ->> 'offset')::numeric < 0
                OR make_interval(secs => (p_entry ->> 'offset')::double precision) >= v_schedule.every THEN
                PERFORM tickq.registry_error(p_name, 'offset',
                    format('must be shorter than every (%s), got %s',
                        tickq.format_duration(v_schedule.every),
                        CASE WHEN jsonb_typeof(p_entry -> 'offset') = 'number'
                            AND (p_entry ->> 'offset')::numeric >= 0
                            THEN tickq.format_duration(make_interval(
                                secs => (p_entry ->> 'offset')::double precision))
                            ELSE p_entry ->> 'offset' END));
            END IF;
            v_schedule.every_offset := nullif(make_interval(secs => (p_entry ->> 'offset')::double precision),
                '0'::interval);
        END IF;
        RETURN v_schedule;
    END IF;
    IF p_entry ? 'offset' THEN
        PERFORM tickq.registry_error(p_name, 'offset', 'only an every cadence takes this key');
    END IF;
    v_item := p_entry -> 'at';
    IF jsonb_typeof(v_item) = 'string' THEN
        v_item := jsonb_build_array(v_item);
    END IF;
    IF jsonb_typeof(v_item) IS DISTINCT FROM 'array' OR jsonb_array_length(v_item) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(v_item) AS e (t)
            WHERE jsonb_typeof(e.t) <> 'string' OR e.t #>> '{}' !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$') THEN
        PERFORM tickq.registry_error(p_name, 'at',
            format('must be a time of day "HH:MM" (00:00-23:59) or a list of them, got %s', left(v_item::text, 200)));
    END IF;
    v_schedule.at_times := tickq.registry_no_repeats(
        ARRAY(SELECT (e.t #>> '{}')::time FROM jsonb_array_elements(v_item) AS e (t)), v_item, p_name, 'at', 'times');
    SELECT d.on_days, d.days, d.months INTO v_schedule.on_days, v_schedule.days, v_schedule.months
    FROM tickq.parse_days(p_name, p_entry) AS d;
    v_schedule.timezone := tickq.parse_zone(p_name, p_entry, p_default_timezone);
    IF (v_schedule.days IS NOT NULL OR v_schedule.months IS NOT NULL)
        AND tickq.next_slot(v_schedule, '2000-01-01Z') IS NULL THEN
        PERFORM tickq.registry_error(p_name, CASE WHEN p_entry ? 'days' THEN 'days' ELSE 'on' END,
            'these days, weekdays and months name no date that exists (such as the 30th of February)');
    END IF;
    RETURN v_schedule;
END
$$;
COMMENT ON FUNCTION tickq.parse_schedule(text, jsonb, text) IS
'The one schedule parser, for registry kinds and user-built agents: every (seconds) with an '
'optional offset; or at ("HH:MM" or a list, no repeats) with on, days and months (tickq.parse_days) '
'and timezone (p_default_timezone when absent); or cron (five fields or an @ form, tickq.cron_calendar) '
'with timezone. Returns the schedule (tickq.with_schedule puts it in a kind''s or an agent''s row); '
'raises TQ002 naming p_name and the key.';

CREATE OR REPLACE FUNCTION tickq.schedule_entry(
    p_schedule tickq.schedule
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    -- The inverse of tickq.parse_schedule: the keys of a registry entry (or of an agent's
    -- fields) that give this schedule, as the file writes them; a calendar's zone only.
    SELECT jsonb_strip_nulls(jsonb_build_object(
        'every', extract(EPOCH FROM p_schedule.every)::bigint,
        'offset', extract(EPOCH FROM p_schedule.every_offset)::bigint,
        'at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI') ORDER BY t.at_time)
            FROM unnest(p_schedule.at_times) AS t (at_time)),
        'on', (SELECT jsonb_agg(tickq.weekday_name(d.day) ORDER BY d.day) FROM unnest(p_schedule.on_days) AS d (day)),
        'days', (SELECT jsonb_agg(d.day ORDER BY d.day) FROM unnest(p_schedule.days) AS d (day)),
        'months', (SELECT jsonb_agg((ARRAY['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct',
            'nov', 'dec'])[m.month] ORDER BY m.month) FROM unnest(p_schedule.months) AS m (month)),
        'cron', p_schedule.cron,
        'timezone', CASE WHEN p_schedule.every IS NULL THEN p_schedule.timezone END
    ))
$$;
COMMENT ON FUNCTION tickq.schedule_entry(tickq.schedule) IS
'A schedule as the registry file writes it (every and offset in seconds; at "HH:MM", on, days, '
'months by name; cron; the zone of a calendar or cron schedule): what tickq.parse_schedule reads '
'back to the same schedule. tickq.registry_entry and tickq.agent_entry hold it.';

CREATE OR REPLACE FUNCTION tickq.write_kind(
    p_kind tickq.job_kind,
    p_reschedule boolean,
    p_new_command boolean,
    p_now timestamptz DEFAULT now()
) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_next timestamptz := tickq.next_slot(tickq.schedule_of(p_kind), p_now);
BEGIN
    INSERT INTO tickq.job_kind AS k (
        name, registry, registry_digest, every, every_offset, at_times, on_days, days, months, cron,
        timezone, timeout, priority, retries, enabled, irreversible, weight, pools, command_since, due_at,
        created_at, updated_at, catch_up
    ) VALUES (
        p_kind.name, p_kind.registry, md5(p_kind.registry::text), p_kind.every, p_kind.every_offset,
        p_kind.at_times, p_kind.on_days, p_kind.days, p_kind.months, p_kind.cron, p_kind.timezone,
        p_kind.timeout, p_kind.priority, p_kind.retries,
        p_kind.enabled, coalesce(p_kind.irreversible, false), coalesce(p_kind.weight, 1),
        coalesce(p_kind.pools, '{}'), p_now,
        -- New to the queue: as its first_run says, else an every cadence is due at once and a
        -- calendar one at its next slot.
        CASE p_kind.registry ->> 'first_run' WHEN 'now' THEN p_now WHEN 'next_slot' THEN v_next
            ELSE CASE WHEN p_kind.every IS NOT NULL THEN p_now ELSE v_next END END,
        p_now, p_now, p_kind.catch_up
    )
    ON CONFLICT (name) DO UPDATE SET
        registry = excluded.registry,
        registry_digest = excluded.registry_digest,
        every = excluded.every,
        every_offset = excluded.every_offset,
        at_times = excluded.at_times,
        on_days = excluded.on_days,
        days = excluded.days,
        months = excluded.months,
        cron = excluded.cron,
        timezone = excluded.timezone,
        timeout = excluded.timeout,
        priority = excluded.priority,
        retries = excluded.retries,
        catch_up = excluded.catch_up,
        enabled = excluded.enabled,
        irreversible = excluded.irreversible,
        weight = excluded.weight,
        pools = excluded.pools,
        -- A new command (or steps, cwd, env) needs a new first run by hand: disarmed.
        command_since = CASE WHEN p_new_command THEN p_now ELSE k.command_since END,
        armed_at = CASE WHEN p_new_command THEN NULL ELSE k.armed_at END,
        armed_by = CASE WHEN p_new_command THEN NULL ELSE k.armed_by END,
        armed_run_id = CASE WHEN p_new_command THEN NULL ELSE k.armed_run_id END,
        retired_at = NULL,
        -- A retired kind coming back starts afresh; p_reschedule moves it to its next slot after
        -- now (a resumed agent does not catch up); otherwise a changed schedule takes effect at
        -- once, unless the kind is already due sooner.
        due_at = CASE
            WHEN k.retired_at IS NOT NULL AND k.name LIKE 'agent.%' THEN excluded.due_at
            WHEN p_reschedule THEN v_next
            WHEN tickq.schedule_of(k) IS NOT DISTINCT FROM tickq.schedule_of(excluded) THEN k.due_at
            ELSE least(k.due_at, v_next)
        END,
        attempts = CASE WHEN k.retired_at IS NOT NULL AND k.name LIKE 'agent.%' THEN 0 ELSE k.attempts END,
        next_trigger = CASE WHEN k.retired_at IS NOT NULL AND k.name LIKE 'agent.%' THEN 'schedule'
            ELSE k.next_trigger END,
        updated_at = p_now;
END
$$;
COMMENT ON FUNCTION tickq.write_kind(tickq.job_kind, boolean, boolean, timestamptz) IS
'The one writer of a job_kind row (registry kinds and agents'' kinds): inserts it (due as its '
'first_run says: now, or next_slot; without one an every cadence at once, a calendar one at its '
'next slot) or overwrites it, un-retiring it; '
'p_reschedule moves it to its next slot after p_now, p_new_command disarms it.';
