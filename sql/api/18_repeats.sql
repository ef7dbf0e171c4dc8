-- Stretches of a window the simulator need not run again (tickq.simulate_window, 07_simulate.sql):
-- where the clock stands at rest (tickq.simulation_at_rest) and a stretch simulated from a day
-- before, to a later instant at rest, repeats a day later for every kind's slots
-- (simulation_repeats), the same runs follow a day later: simulation_repeat copies them. After
-- 16_worst_case.sql, whose calendar_slots_in it walks.

CREATE OR REPLACE FUNCTION tickq.simulation_repeats(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_now timestamptz DEFAULT now()
) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    -- Every enabled kind has, p_shift later, the slots it has from p_from until p_until and its
    -- first one at or after p_until, each p_shift later: an every cadence (aligned to the clock,
    -- tickq.next_slot) when p_shift is a whole number of cadences; a calendar slot by slot. Or it
    -- has no slot in either stretch: it waits through both, its due time read by no claim. And
    -- no kind is paused past p_from (a pause ends at an instant, not p_shift later).
    SELECT NOT EXISTS (
        SELECT FROM tickq.job_kind AS k
        WHERE k.enabled AND CASE
            WHEN k.paused_until > p_from THEN true
            WHEN tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
                    p_from - interval '1 microsecond') >= p_until
                AND tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
                    k.timezone, p_from + p_shift - interval '1 microsecond') >= p_until + p_shift THEN false
            WHEN k.every IS NOT NULL THEN extract(EPOCH FROM p_shift) % extract(EPOCH FROM k.every) <> 0
            ELSE ARRAY(
                SELECT c.slot FROM tickq.calendar_slots_in(k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
                    p_until, p_from) AS c (slot)
                UNION ALL
                SELECT tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
                    k.timezone, p_until - interval '1 microsecond')
            ) IS DISTINCT FROM ARRAY(
                SELECT c.slot - p_shift FROM tickq.calendar_slots_in(k.at_times, k.on_days, k.days, k.months, k.cron,
                    k.timezone, p_until + p_shift, p_from + p_shift) AS c (slot)
                UNION ALL
                SELECT tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
                    k.timezone, p_until + p_shift - interval '1 microsecond') - p_shift
            )
        END
    )
$$;
COMMENT ON FUNCTION tickq.simulation_repeats(timestamptz, timestamptz, interval, timestamptz) IS
'For the simulator: true when the stretch from p_from until p_until comes again p_shift later for '
'every enabled kind (the same slots, and the first one after, p_shift later; or no slot in either '
'stretch), with no kind paused past p_from. p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.simulation_repeat(
    p_rests timestamptz[],
    p_last timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_shift constant interval := interval '1 day';
    v_from timestamptz;
    v_candidates timestamptz[];
    v_low integer := 0;
    v_high integer;
    v_middle integer;
BEGIN
    -- p_rests: the instants the clock stood at rest (tickq.simulation_at_rest) in this window, in
    -- order, the last one now. From a day before it a stretch was simulated to a later instant
    -- at rest; when every kind's slots repeat a day later over it (tickq.simulation_repeats),
    -- the clock moved from now would make the same runs a day later and stand at rest at its
    -- end again: its runs are copied a day later and the clock stands there. The longest such
    -- stretch (a shorter one repeats whenever a longer one does), ending by p_last. Returns
    -- the instants the copy stands at rest (those of the stretch it copies, a day later: the
    -- same state, so a day after the copy can be copied in turn), the last one where the clock
    -- now stands; NULL when nothing repeats.
    v_from := p_now - v_shift;
    IF NOT v_from = ANY(p_rests) THEN
        RETURN NULL;
    END IF;
    v_candidates := ARRAY(SELECT r.at FROM unnest(p_rests) AS r (at)
        WHERE r.at > v_from AND r.at <= p_now AND r.at + v_shift <= p_last ORDER BY r.at);
    v_high := cardinality(v_candidates);
    WHILE v_low < v_high LOOP
        v_middle := (v_low + v_high + 1) / 2;
        IF tickq.simulation_repeats(v_from, v_candidates[v_middle], v_shift) THEN
            v_low := v_middle;
        ELSE
            v_high := v_middle - 1;
        END IF;
    END LOOP;
    IF v_low = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at, started_at, finished_at,
        outcome, exit_code, output_tail, duration, due_at, slot, late_report_at, run_by, slot_at, first_slot_at,
        slots_covered, weight, pools)
    SELECT r.kind, r.attempt, r.run_trigger, r.slots, r.dispatcher, r.claimed_at + v_shift, r.started_at + v_shift,
        r.finished_at + v_shift, r.outcome, r.exit_code, r.output_tail, r.duration, r.due_at + v_shift, r.slot,
        r.late_report_at + v_shift, r.run_by, r.slot_at + v_shift, r.first_slot_at + v_shift, r.slots_covered,
        r.weight, r.pools
    FROM tickq.job_run AS r
    WHERE r.dispatcher = 'simulator' AND r.claimed_at >= v_from AND r.claimed_at < v_candidates[v_low]
    ORDER BY r.id;
    UPDATE tickq.job_kind AS k SET
        due_at = tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone,
            v_candidates[v_low] + v_shift - interval '1 microsecond')
    WHERE k.enabled;
    RETURN ARRAY(SELECT c.at + v_shift FROM unnest(v_candidates[1:v_low]) AS c (at) ORDER BY c.at);
END
$$;
COMMENT ON FUNCTION tickq.simulation_repeat(timestamptz[], timestamptz, timestamptz) IS
'For the simulator, in a scratch database, the clock at rest at p_now (p_rests: where it stood at '
'rest in this window, p_now last): when a stretch from a day before, simulated to a later instant '
'at rest (at most p_last a day later), repeats a day later for every kind '
'(tickq.simulation_repeats), its runs are copied a day later and the clock stands at rest at its '
'end. Returns the instants the copy stands at rest (the stretch''s rest points of p_rests, a day '
'later), in order, the last one where the clock stands; NULL when no stretch repeats.';
