-- Precision: how late the tick makes a slot that falls between two ticks, and the tick that keeps
-- every slot on time. A dispatcher woken every `tick` runs a slot at the first tick at or after
-- it; the OS timers wake it on the clock (:00, :05, :10... in the machine's zone) when the tick
-- divides an hour, so a slot at 06:17 with tick = "5m" runs at 06:20. `tickq check` warns (through
-- tickq.schedule_warnings) and `tickq legacy import` proposes the tick (tickq.tick_on_time).

CREATE OR REPLACE FUNCTION tickq.slot_seconds(
    p_entry jsonb,
    p_timezone text,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (second integer, hour integer)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_calendar tickq.calendar;
    v_step integer;
    v_start integer;
BEGIN
    -- The seconds past the hour (wall clock in p_timezone) a registry entry's slots fall on, with
    -- the first hour of the day each falls in. They are read from the schedule, not walked: a
    -- clock change shifts times by whole hours (one that does not, Lord Howe's half hour, moves
    -- a shifted time off the tick too). Nothing for an entry whose schedule does not read.
    IF jsonb_typeof(p_entry -> 'every') = 'number' THEN
        -- An every cadence is aligned to the Unix epoch: the hour's slots start at the offset
        -- plus the zone's offset from UTC, and repeat every gcd(every, 1h).
        v_step := gcd((p_entry ->> 'every')::numeric::integer, 3600);
        v_start := ((coalesce((p_entry ->> 'offset')::numeric, 0)::integer
            + extract(EPOCH FROM (p_now AT TIME ZONE p_timezone) - (p_now AT TIME ZONE 'UTC'))::integer)
            % v_step + v_step) % v_step;
        RETURN QUERY SELECT v_start + g.n * v_step, 0 FROM generate_series(0, 3600 / v_step - 1) AS g (n);
        RETURN;
    END IF;
    IF jsonb_typeof(p_entry -> 'cron') = 'string' THEN
        v_calendar := tickq.cron_calendar(p_entry ->> 'cron', p_timezone);
    ELSE
        v_calendar.times := ARRAY(SELECT t.t::time FROM jsonb_array_elements_text(
            CASE jsonb_typeof(p_entry -> 'at') WHEN 'array' THEN p_entry -> 'at' WHEN 'string'
                THEN jsonb_build_array(p_entry -> 'at') ELSE '[]' END) AS t (t));
    END IF;
    IF v_calendar.times IS NOT NULL THEN
        RETURN QUERY SELECT floor(extract(EPOCH FROM t.t))::integer % 3600,
            min(extract(HOUR FROM t.t))::integer
            FROM unnest(v_calendar.times) AS t (t) GROUP BY 1 ORDER BY 1;
        RETURN;
    END IF;
    RETURN QUERY SELECT m.m * 60, coalesce(v_calendar.hours[1], 0)::integer
        FROM unnest(v_calendar.minutes) AS m (m) ORDER BY 1;
EXCEPTION WHEN OTHERS THEN
    RETURN;  -- registry_problems says what is wrong with it
END
$$;
COMMENT ON FUNCTION tickq.slot_seconds(jsonb, text, timestamptz) IS
'The seconds past the hour (wall clock in p_timezone) a registry entry''s slots fall on, each with '
'the first hour of the day it falls in (0 for an every cadence, which starts from the Unix epoch, '
'its offset and the zone''s offset at p_now); nothing for a schedule that does not read.';

CREATE OR REPLACE FUNCTION tickq.tick_lateness(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    key text,
    timezone text,
    tick interval,
    grain integer,
    late_by interval,
    slot_time time,
    runs_time time
)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_tick integer := CASE WHEN jsonb_typeof(p_registry -> 'settings' -> 'tick') = 'number'
        THEN (p_registry -> 'settings' ->> 'tick')::numeric::integer ELSE 300 END;
    v_zone text := coalesce(p_registry -> 'settings' ->> 'timezone', 'UTC');
    v_entry record;
    v_slot record;
    v_late integer;
BEGIN
    -- A slot runs at the first tick at or after it. A tick that does not divide an hour counts
    -- from the timer's start: no slot is known late, and no row is returned.
    IF v_tick NOT BETWEEN 1 AND 3600 OR 3600 % v_tick <> 0 THEN
        RETURN;
    END IF;
    tick := make_interval(secs => v_tick);
    FOR v_entry IN SELECT e.key AS name, e.value AS entry
        FROM jsonb_each(coalesce(p_registry -> 'kinds', '{}'::jsonb)) AS e ORDER BY e.key LOOP
        kind := v_entry.name;
        key := CASE WHEN v_entry.entry ? 'cron' THEN 'cron' WHEN v_entry.entry ? 'every' THEN 'every'
            ELSE 'at' END;
        -- An every cadence has no zone of its own: the ticks' is the machine's, which the
        -- registry's timezone stands for.
        timezone := CASE WHEN key = 'every' THEN v_zone ELSE coalesce(v_entry.entry ->> 'timezone', v_zone) END;
        grain := NULL;
        late_by := '0'::interval;
        slot_time := NULL;
        runs_time := NULL;
        FOR v_slot IN SELECT * FROM tickq.slot_seconds(v_entry.entry, timezone, p_now) LOOP
            grain := gcd(coalesce(grain, 3600), v_slot.second);
            v_late := (v_tick - v_slot.second % v_tick) % v_tick;
            IF make_interval(secs => v_late) > late_by THEN
                late_by := make_interval(secs => v_late);
                slot_time := make_time(v_slot.hour, v_slot.second / 60, v_slot.second % 60);
                runs_time := slot_time + late_by;
            END IF;
        END LOOP;
        IF grain IS NOT NULL THEN  -- else the schedule does not read: registry_problems' to say
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION tickq.tick_lateness(jsonb, timestamptz) IS
'Per kind of a registry (the JSON sync sends) whose schedule reads: how late the registry''s tick '
'runs its slots at most (late_by: the first time of day it runs that late, slot_time, runs at '
'runs_time, in the kind''s zone), and grain, the largest number of seconds dividing an hour that '
'divides every slot''s seconds past the hour (tickq.slot_seconds). Ticks fall on the clock when the '
'tick divides an hour; for any other tick nothing is known late and no row is returned. A kind '
'whose schedule does not read has no row.';

CREATE OR REPLACE FUNCTION tickq.on_time_tick(
    p_tick integer,
    p_grains integer[]
) RETURNS interval
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    v_grain integer := 3600;
BEGIN
    IF p_tick IS NULL OR p_tick NOT BETWEEN 1 AND 3600 OR 3600 % p_tick <> 0 THEN
        RETURN NULL;
    END IF;
    FOR v_n IN 1..coalesce(cardinality(p_grains), 0) LOOP
        v_grain := gcd(v_grain, p_grains[v_n]);
    END LOOP;
    -- The largest divisor of every grain (so of an hour) no longer than p_tick.
    FOR v_d IN REVERSE least(p_tick, v_grain)..1 LOOP
        IF v_grain % v_d = 0 THEN
            RETURN make_interval(secs => v_d);
        END IF;
    END LOOP;
    RETURN NULL;  -- not reached: 1 divides every grain
END
$$;
COMMENT ON FUNCTION tickq.on_time_tick(integer, integer[]) IS
'The largest tick (an interval) dividing an hour and no longer than p_tick seconds that divides '
'every one of p_grains (tickq.tick_lateness''s grain per kind): the tick that keeps every slot on '
'time. NULL when p_tick does not divide an hour.';

CREATE OR REPLACE FUNCTION tickq.tick_on_time(
    p_registry jsonb,
    p_now timestamptz DEFAULT now()
) RETURNS interval
LANGUAGE sql STABLE
AS $$
    SELECT tickq.on_time_tick(coalesce((p_registry -> 'settings' ->> 'tick')::numeric, 300)::integer,
        ARRAY(SELECT l.grain FROM tickq.tick_lateness(p_registry, p_now) AS l))
$$;
COMMENT ON FUNCTION tickq.tick_on_time(jsonb, timestamptz) IS
'The tick that keeps every slot of a registry (the JSON sync sends) on time: the largest tick, no '
'longer than the registry''s, that divides an hour and every slot''s seconds past the hour '
'(tickq.tick_lateness, tickq.on_time_tick); the registry''s own tick when none of its slots falls '
'between ticks, NULL for a tick that does not divide an hour.';
