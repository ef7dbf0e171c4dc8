-- Catch-up: a kind's catch_up ("30m") bounds how late a missed slot may still run. A claim that
-- finds such a kind due later than that (one index probe, job_kind_catch_up, in its settings
-- statement) first calls tickq.catch_up_kinds: the slots older than the window are recorded as
-- one run of outcome `skipped` (no command started; its slot_at, first_slot_at and
-- slots_covered name the slots it skipped), and the kind moves on to the first slot still
-- within the window, which the same claim may then run (merged with any later ones, as today),
-- or to its next future slot. A skipped run is no failure: the streak, the retries and the
-- alerts are left alone.

CREATE OR REPLACE FUNCTION tickq.kinds_to_catch_up(
    p_now timestamptz DEFAULT now()
) RETURNS SETOF text
LANGUAGE sql STABLE
AS $$
    -- One SELECT, so that the claim's EXISTS inlines it (job_kind_catch_up's predicate). A kind
    -- a claim could take (enabled, armed, not running, not paused) whose scheduled due time is
    -- later than its catch_up; a retry's due time is no slot and never skipped.
    SELECT k.name FROM tickq.job_kind AS k
    WHERE k.catch_up IS NOT NULL AND tickq.kind_claimable(k) AND k.run_id IS NULL
        AND k.due_at < p_now AND k.due_at < p_now - k.catch_up AND k.next_trigger = 'schedule'
        AND (k.paused_until IS NULL OR k.paused_until <= p_now)
$$;
COMMENT ON FUNCTION tickq.kinds_to_catch_up(timestamptz) IS
'The kinds a claim could take at p_now whose scheduled due time is later than their catch_up: '
'tickq.catch_up_kinds skips their old slots before a claim.';

CREATE OR REPLACE FUNCTION tickq.catch_up_kinds(
    p_dispatcher text DEFAULT 'unnamed',
    p_now timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_name text;
    v_kind tickq.job_kind;
    v_edge timestamptz;
    v_run_id bigint;
    v_skipped integer := 0;
BEGIN
    FOR v_name IN SELECT c.name FROM tickq.kinds_to_catch_up(p_now) AS c (name) ORDER BY 1 LOOP
        -- Locked as a claim locks (another claim's or report's row is left to it), then judged
        -- again by a statement that sees what was committed before the lock.
        SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = v_name FOR UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND OR NOT EXISTS (
            SELECT FROM tickq.kinds_to_catch_up(p_now) AS c (name) WHERE c.name = v_name);
        -- Skipped: every slot from the due time up to (not at) p_now - catch_up.
        v_edge := p_now - v_kind.catch_up - interval '1 microsecond';
        INSERT INTO tickq.job_run AS r (kind, attempt, run_trigger, slots, dispatcher, claimed_at, finished_at,
            outcome, due_at, output_tail, slot_at, first_slot_at, slots_covered)
        SELECT v_kind.name, v_kind.attempts + 1, 'schedule', 0, p_dispatcher, p_now, p_now, 'skipped', v_kind.due_at,
            format('[tickq: skipped %s slot(s) from %s to %s: more than catch_up %s late]', s.n,
                v_kind.due_at, s.last, tickq.format_duration(v_kind.catch_up)),
            s.last, v_kind.due_at, s.n
        FROM (SELECT tickq.last_slot(tickq.schedule_of(v_kind), v_kind.due_at, v_edge) AS last,
            1 + tickq.slots_between(tickq.schedule_of(v_kind), v_kind.due_at, v_edge) AS n) AS s
        RETURNING r.id INTO v_run_id;
        -- On to the first slot still within the window (due now), else the next one ahead. A
        -- schedule with no slot ahead waits a day, as tickq.finish_run has it.
        UPDATE tickq.job_kind AS k SET
            due_at = coalesce(tickq.next_slot(tickq.schedule_of(k), v_edge), p_now + interval '1 day'),
            last_run_id = v_run_id,
            attempts = 0,
            updated_at = p_now
        WHERE k.name = v_name;
        v_skipped := v_skipped + 1;
    END LOOP;
    RETURN v_skipped;
END
$$;
COMMENT ON FUNCTION tickq.catch_up_kinds(text, timestamptz) IS
'Before a claim (tickq.claim_jobs calls it when tickq.kinds_to_catch_up finds a kind): for each '
'kind due later than its catch_up, records its slots older than the window as one job_run of '
'outcome skipped by p_dispatcher (no command; slot_at, first_slot_at and slots_covered name them) '
'and moves the kind to its first slot within the window, else its next slot. Returns how many '
'kinds it moved. The failure streak, retries and alerts are left alone.';
