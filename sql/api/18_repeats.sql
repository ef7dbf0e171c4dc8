-- Stretches of a window the simulator need not run again (tickq.simulate_window, 07_simulate.sql):
-- where the clock stands at rest (tickq.simulation_at_rest) and a stretch simulated from some
-- days before, to a later instant at rest, repeats that many days later for every kind's slots
-- (simulation_repeats_until, which walks each kind's slots with tickq.next_slot), the same runs
-- follow that many days later: simulation_repeat copies them.

CREATE OR REPLACE FUNCTION tickq.simulation_repeats_until(
    p_from timestamptz,
    p_until timestamptz,
    p_shift interval,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    k record;
    v_horizon timestamptz := p_until;
    v_slot timestamptz;
    v_later timestamptz;
    v_matched timestamptz;
BEGIN
    -- A stretch from p_from until C comes again p_shift later when every enabled kind has, p_shift
    -- later, the slots it has from p_from until C and its first one at or after C, each p_shift
    -- later: an every cadence (aligned to the clock, tickq.next_slot) when p_shift is a whole
    -- number of cadences; a calendar slot by slot. Or it has no slot in either stretch: it waits
    -- through both, its due time read by no claim. And no kind is paused past p_from (a pause
    -- ends at an instant, not p_shift later). Whether C qualifies only ever changes once, from
    -- yes to no, as C grows: so this walks each kind's slots from p_from and from p_from +
    -- p_shift side by side, once, and finds the latest C (at most p_until) where each still
    -- qualifies, instead of testing candidate instants one by one. A kind's walk stops at the
    -- first slot that differs, or at the first slot at or past the latest C found so far.
    IF EXISTS (SELECT FROM tickq.job_kind AS pk WHERE pk.enabled AND pk.paused_until > p_from) THEN
        RETURN NULL;
    END IF;
    -- Times of day in UTC with no day rules repeat every whole day by definition (UTC never
    -- changes its offset): their walk would match slot for slot to the end, so it is left out.
    -- The answer is the least of the kinds' (the order changes nothing), so the kinds most
    -- likely to differ go first: a cadence p_shift does not divide (its first slot), then
    -- calendars with day rules, then those of a zone with clock changes, fewest times first.
    -- Once the answer is p_from the walk ends, and a stretch that does not repeat costs a step
    -- or two, not a day of every kind's slots.
    FOR k IN
        SELECT jk.every, jk.every_offset, jk.at_times, jk.on_days, jk.days, jk.months, jk.cron, jk.timezone
        FROM tickq.job_kind AS jk
        WHERE jk.enabled
            AND NOT (jk.every IS NOT NULL AND extract(EPOCH FROM p_shift) % extract(EPOCH FROM jk.every) = 0)
            AND NOT (jk.timezone = 'UTC' AND jk.every IS NULL AND jk.cron IS NULL AND jk.on_days IS NULL
                AND jk.days IS NULL AND jk.months IS NULL AND extract(EPOCH FROM p_shift) % 86400 = 0)
        ORDER BY jk.every IS NULL, jk.on_days IS NULL AND jk.days IS NULL AND jk.months IS NULL AND jk.cron IS NULL,
            jk.timezone = 'UTC', cardinality(jk.at_times), jk.name
    LOOP
        v_slot := tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
            k.timezone, p_from - interval '1 microsecond');
        v_later := tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
            k.timezone, p_from + p_shift - interval '1 microsecond');
        v_matched := NULL;
        LOOP
            -- an every cadence that p_shift does not divide only waits through both stretches
            IF k.every IS NOT NULL OR v_slot IS DISTINCT FROM v_later - p_shift THEN
                -- the last slot that matched is the latest C (its first slot at or after C);
                -- before any matched, C must come before the first slot of either stretch
                v_horizon := least(v_horizon, coalesce(v_matched,
                    CASE WHEN v_slot IS NOT NULL AND v_later IS NOT NULL THEN least(v_slot, v_later - p_shift) END,
                    p_from));
                EXIT;
            END IF;
            EXIT WHEN v_slot IS NULL OR v_slot >= v_horizon;  -- the same slots as far as needed
            v_matched := v_slot;
            v_slot := tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
                k.timezone, v_slot);
            v_later := tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron,
                k.timezone, v_later);
        END LOOP;
        EXIT WHEN v_horizon <= p_from;
    END LOOP;
    RETURN v_horizon;
END
$$;
COMMENT ON FUNCTION tickq.simulation_repeats_until(timestamptz, timestamptz, interval, timestamptz) IS
'For the simulator: the latest instant C, at most p_until, such that the stretch from p_from until C '
'comes again p_shift later for every enabled kind (the same slots, and the first one at or after C, '
'p_shift later; or no slot in either stretch); p_from or earlier when none; NULL when a kind is '
'paused past p_from. p_now is unused.';

CREATE OR REPLACE FUNCTION tickq.simulation_repeat(
    p_rests timestamptz[],
    p_last timestamptz,
    p_now timestamptz DEFAULT now()
) RETURNS timestamptz[]
LANGUAGE plpgsql
AS $$
DECLARE
    v_shift interval;
    v_from timestamptz;
    v_candidates timestamptz[];
    v_until timestamptz;
    v_low integer := 0;
BEGIN
    -- p_rests: the instants the clock stood at rest (tickq.simulation_at_rest) in this window, in
    -- order, the last one now. From a whole number of days before it a stretch was simulated to
    -- a later instant at rest; when every kind's slots repeat that many days later over it
    -- (tickq.simulation_repeats_until), the clock moved from now would make the same runs that
    -- many days later and stand at rest at its end again: its runs are copied and the clock
    -- stands there. The day before first, then two days before, and so on to the window's first
    -- rest: a stretch that holds a weekly kind's slot differs from the day after, which lacks
    -- it, and that day is then the same as the day before the weekly slot (real_fix's week: 130
    -- parts simulated instead of 148, bench/README.md). The longest stretch of the nearest such
    -- day (a shorter one repeats whenever a longer one does), ending by p_last. Returns the
    -- instants the copy stands at rest (those of the stretch it copies, shifted: the same state,
    -- so a day after the copy can be copied in turn), the last one where the clock now stands;
    -- NULL when nothing repeats.
    FOR v_days IN 1..greatest(0, extract(DAY FROM p_now - p_rests[1])::integer) LOOP
        v_shift := make_interval(hours => 24 * v_days);  -- whole days of the clock, whatever the session's zone
        v_from := p_now - v_shift;
        CONTINUE WHEN NOT v_from = ANY(p_rests);
        v_candidates := ARRAY(SELECT r.at FROM unnest(p_rests) AS r (at)
            WHERE r.at > v_from AND r.at <= p_now AND r.at + v_shift <= p_last ORDER BY r.at);
        CONTINUE WHEN cardinality(v_candidates) = 0;
        v_until := tickq.simulation_repeats_until(v_from, v_candidates[cardinality(v_candidates)], v_shift);
        v_low := coalesce((SELECT max(c.n) FROM unnest(v_candidates) WITH ORDINALITY AS c (at, n)
            WHERE c.at <= v_until), 0);
        EXIT WHEN v_low > 0;
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
'rest in this window, p_now last): when a stretch from the nearest whole number of days before, '
'simulated to a later instant at rest (at most p_last that many days later), repeats that many '
'days later for every kind (tickq.simulation_repeats_until), its runs are copied that many days '
'later and the clock stands at rest at its end. Returns the instants the copy stands at rest (the '
'stretch''s rest points of p_rests, shifted), in order, the last one where the clock stands; NULL '
'when no stretch repeats.';
