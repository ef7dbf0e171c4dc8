-- No single kind's data stops claims for the others: a kind that fails and loses its lease
-- hundreds of times in a row, with the largest retries allowed, never makes claim_jobs,
-- claim_manual, report_run or expire_leases raise, and the healthy kinds keep being claimed.
BEGIN;
SELECT plan(14);

-- a kind with the largest retries allowed, and a healthy one
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "retry_base": 30, "retry_max": 3600},
    "kinds": {
        "poison": {"command": ["x"], "every": 60, "timeout": 60, "retries": 100, "priority": "urgent"},
        "healthy": {"command": ["x"], "every": 60, "timeout": 60}
    }}', '2026-06-01 00:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

-- Drives both kinds for p_rounds ticks, 61 minutes apart (past the retry cap and the lease):
-- poison fails in two rounds of three and is left unreported (its lease expires into a lost
-- run) in the third; healthy succeeds. Returns how often each was claimed.
CREATE FUNCTION pg_temp.drive(p_rounds integer)
RETURNS TABLE (poison_claims integer, healthy_claims integer, lost integer)
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := '2026-06-01 00:01Z';
    v_claim record;
BEGIN
    poison_claims := 0;
    healthy_claims := 0;
    FOR v_round IN 1..p_rounds LOOP
        FOR v_claim IN SELECT * FROM tickq.claim_jobs(3, 'd1', v_now) LOOP
            IF v_claim.kind = 'poison' THEN
                poison_claims := poison_claims + 1;
                IF v_round % 3 <> 0 THEN
                    PERFORM tickq.report_run(v_claim.run_id, 'd1', 'failed', 1, 'boom', NULL,
                        v_now + interval '10 seconds');
                END IF;
            ELSE
                healthy_claims := healthy_claims + 1;
                PERFORM tickq.report_run(v_claim.run_id, 'd1', 'ok', 0, NULL, NULL,
                    v_now + interval '10 seconds');
            END IF;
        END LOOP;
        v_now := v_now + interval '61 minutes';
    END LOOP;
    lost := (SELECT count(*) FROM tickq.job_run AS r WHERE r.kind = 'poison' AND r.outcome = 'lost');
    RETURN NEXT;
END
$$;

CREATE TEMP TABLE driven AS SELECT * FROM pg_temp.drive(300);
SELECT is((SELECT healthy_claims FROM driven), 300, 'the healthy kind was claimed in all 300 rounds');
SELECT ok((SELECT poison_claims >= 200 AND lost >= 50 FROM driven),
    'while the poison kind failed or lost its lease in every round it was claimed');
SELECT ok((SELECT max(attempt) FROM tickq.job_run WHERE kind = 'poison') > 60,
    'the poison kind got past the attempt where retry_base * 2^n overflowed an interval');
SELECT is((SELECT max(r.next_due - r.finished_at) FROM (
    SELECT r.outcome, r.attempt, r.finished_at, lead(r.due_at) OVER (ORDER BY r.id) AS next_due,
        lead(r.attempt) OVER (ORDER BY r.id) AS next_attempt
    FROM tickq.job_run AS r WHERE r.kind = 'poison') AS r
    WHERE r.outcome = 'failed' AND r.next_attempt = r.attempt + 1), '1 hour'::interval,
    'the backoff never passes retry_max');

-- The backoff itself, at the attempts around the old overflow.
-- the poison kind at its 100th attempt
SELECT tickq.expire_leases('2026-06-30Z');
UPDATE tickq.job_kind SET attempts = 99, next_trigger = 'retry', due_at = '2026-07-01Z' WHERE name = 'poison';
UPDATE tickq.job_kind SET due_at = '2026-07-01 12:00Z' WHERE name = 'healthy';
SELECT results_eq($$SELECT kind, attempt FROM tickq.claim_jobs(1, 'd1', '2026-07-01Z')$$,
    $$VALUES ('poison', 100)$$, 'claimed');
SELECT results_eq($$SELECT next_due_at, next_trigger::text FROM tickq.report_run(
    (SELECT run_id FROM tickq.job_kind WHERE name = 'poison'), 'd1', 'failed', 1, NULL, NULL, '2026-07-01Z')$$,
    $$VALUES ('2026-07-01 01:00Z'::timestamptz, 'retry')$$, 'attempt 100 fails: retry after retry_max');
-- a manual run of the poison kind
SELECT * FROM tickq.claim_manual('poison', 'd1', NULL, '2026-07-01 00:30Z');
SELECT results_eq($$SELECT kind FROM tickq.expire_leases('2026-07-02Z')$$, $$VALUES ('poison')$$,
    'its lease expires into a lost run without an error');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-07-02 00:05Z') ORDER BY kind$$,
    $$VALUES ('healthy'), ('poison')$$, 'and claims go on');

-- A kind asleep for decades merges its slots without overflowing the count.
-- a one-second kind due since 1900
UPDATE tickq.job_kind SET every = '1 second', due_at = '1900-01-01Z', run_id = NULL,
    leased_by = NULL, leased_until = NULL WHERE name = 'healthy';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-07-03Z') WHERE kind = 'healthy'$$,
    $$VALUES ('healthy')$$, 'it is claimed');
SELECT is((SELECT slots::integer FROM tickq.job_run WHERE kind = 'healthy' ORDER BY id DESC LIMIT 1), 2147483647,
    'its run merges as many slots as an integer holds');

-- A lease whose rescheduling raises (a fault simulated by a trigger) is still released, and
-- the claim that found it goes on.
-- poison leased by hand
SELECT * FROM tickq.claim_manual('poison', 'd1', NULL, '2026-07-04Z');
CREATE FUNCTION pg_temp.refuse_rescheduling() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'simulated fault rescheduling %', NEW.name;
END
$$;
CREATE TRIGGER simulated_fault BEFORE UPDATE ON tickq.job_kind
FOR EACH ROW WHEN (new.name = 'poison' AND new.failure_streak > old.failure_streak)
EXECUTE FUNCTION pg_temp.refuse_rescheduling();
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-07-05Z')$$, $$VALUES ('healthy')$$,
    'a claim that expires it does not raise, and claims the healthy kind');
SELECT results_eq($$SELECT outcome::text, output_tail::text LIKE '%simulated fault rescheduling poison%'
    FROM tickq.job_run WHERE kind = 'poison' ORDER BY id DESC LIMIT 1$$,
    $$VALUES ('lost', true)$$, 'the run is lost, and its tail says why it was not rescheduled');
SELECT results_eq($$SELECT run_id, due_at FROM tickq.job_kind WHERE name = 'poison'$$,
    $$VALUES (NULL::bigint, '2026-07-05 01:00Z'::timestamptz)$$, 'the lease is released; the kind waits retry_max');
DROP TRIGGER simulated_fault ON tickq.job_kind;
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-07-05 01:00Z') WHERE kind = 'poison'$$,
    $$VALUES ('poison')$$, 'the kind is claimed again after its wait');

SELECT * FROM finish();
ROLLBACK;
