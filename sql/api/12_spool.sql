-- What a dispatcher keeps on its own host and reports late, and what the database keeps of the
-- registry's secrets.

CREATE OR REPLACE FUNCTION tickq.env_digests(
    p_kind text,
    p_env jsonb
) RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $$
    -- Env values are often secrets: the mirror keeps a digest of each, enough for drift to see a
    -- change. The kind and name go into the digest, so equal values do not look equal. Values
    -- already in digest form (tickq.registry.env_digest computed them) are kept as they are.
    SELECT jsonb_object_agg(e.name, CASE
        WHEN e.value #>> '{}' ~ '^sha256:[0-9a-f]{64}$' THEN e.value
        ELSE to_jsonb('sha256:' || encode(sha256(convert_to(
            p_kind || ':' || e.name || '=' || (e.value #>> '{}'), 'UTF8')), 'hex'))
    END)
    FROM jsonb_each(CASE WHEN jsonb_typeof(p_env) = 'object' THEN p_env END) AS e (name, value)
$$;
COMMENT ON FUNCTION tickq.env_digests(text, jsonb) IS
'A kind''s env table with each value replaced by "sha256:" and the hex digest of '
'"kind:NAME=value" (null for no env): the database never keeps an env value itself.';

CREATE OR REPLACE FUNCTION tickq.report_late_run(
    p_run_id bigint,
    p_dispatcher text,
    p_outcome tickq.outcome,
    p_exit_code integer DEFAULT NULL,
    p_output_tail text DEFAULT NULL,
    p_duration interval DEFAULT NULL,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (run_id bigint, kind text, outcome tickq.outcome, verdict text)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
DECLARE
    v_run tickq.job_run;
    v_kind tickq.job_kind;
    v_finished timestamptz;
BEGIN
    PERFORM tickq.check_reported_outcome(p_outcome, 'run');
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = p_run_id;
    -- A run the database never had (a claim lost in a failover): "unknown", kept aside by the
    -- dispatcher, never silently dropped.
    IF NOT FOUND THEN
        RETURN QUERY SELECT p_run_id, NULL::text, NULL::tickq.outcome, 'unknown'::text;
        RETURN;
    END IF;
    -- Only the dispatcher that claimed the run may report it, late or not.
    IF v_run.dispatcher IS DISTINCT FROM p_dispatcher THEN
        RETURN QUERY SELECT p_run_id, v_run.kind, v_run.outcome, 'ignored'::text;
        RETURN;
    END IF;
    -- Kind before run, as everywhere. A kind row another session holds is not waited on: the
    -- result stays in the spool for the next tick (verdict "locked").
    SELECT * INTO v_kind FROM tickq.job_kind AS k WHERE k.name = v_run.kind FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN QUERY SELECT p_run_id, v_run.kind, v_run.outcome, 'locked'::text;
        RETURN;
    END IF;
    SELECT * INTO STRICT v_run FROM tickq.job_run AS r WHERE r.id = p_run_id FOR UPDATE;

    IF v_run.outcome = 'running' AND v_kind.run_id = p_run_id THEN
        -- Still leased (the outage ended before anything expired the lease): an ordinary report.
        PERFORM tickq.finish_run(p_run_id, p_outcome, p_exit_code, p_output_tail, p_duration, p_now);
        RETURN QUERY SELECT p_run_id, v_run.kind, p_outcome, 'reported'::text;
        RETURN;
    END IF;
    IF v_run.outcome <> 'lost' OR v_run.late_report_at IS NOT NULL THEN
        RETURN QUERY SELECT p_run_id, v_run.kind, v_run.outcome, 'ignored'::text;
        RETURN;
    END IF;

    -- The lease expired into `lost`: the run gets its real outcome, marked late.
    UPDATE tickq.job_run AS r SET
        outcome = p_outcome,
        exit_code = p_exit_code,
        output_tail = right(p_output_tail, 65536),
        duration = coalesce(p_duration, r.duration),
        late_report_at = p_now
    WHERE r.id = p_run_id;

    -- `lost` counted as a failure (streak, maybe a retry). A success undoes that, as long as
    -- nothing has run the kind since: the kind is rescheduled as if the report had come in time,
    -- from when the command really finished.
    IF p_outcome = 'ok' AND v_kind.run_id IS NULL AND v_kind.last_run_id = p_run_id
        AND NOT EXISTS (SELECT FROM tickq.job_run AS r WHERE r.kind = v_run.kind AND r.id > p_run_id) THEN
        v_finished := least(v_run.finished_at,
            coalesce(v_run.started_at, v_run.claimed_at) + coalesce(p_duration, '0'::interval));
        UPDATE tickq.job_kind AS k SET
            failure_streak = 0,
            attempts = 0,
            next_trigger = 'schedule',
            due_at = tickq.next_slot(k.every, k.every_offset, k.at_times, k.on_days, k.days, k.months, k.cron, k.timezone, v_finished),
            updated_at = p_now
        WHERE k.name = v_run.kind;
        RETURN QUERY SELECT p_run_id, v_run.kind, p_outcome, 'late, failure undone'::text;
        RETURN;
    END IF;
    RETURN QUERY SELECT p_run_id, v_run.kind, p_outcome, 'late'::text;
END
$$;
COMMENT ON FUNCTION tickq.report_late_run(bigint, text, tickq.outcome, integer, text, interval, timestamptz) IS
'A result kept in a dispatcher''s spool while the database was away. A run still leased to '
'p_dispatcher is finished as report_run would (verdict "reported"); a run the lease turned into '
'lost gets its real outcome and late_report_at (verdict "late"), and a late success also undoes '
'the failure lost caused (streak, retry) when nothing has run the kind since ("late, failure '
'undone"). A run the database does not have (pruned, or a claim lost in a failover) is '
'"unknown"; anything else (not this dispatcher''s run, already reported) is "ignored". Both change '
'nothing; "locked" (nothing changed) when another session holds the kind''s row: the '
'spool keeps the result for the next try.';

CREATE OR REPLACE FUNCTION tickq.live_leases(
    p_run_ids bigint[]
) RETURNS TABLE (run_id bigint, kind text, leased_by text, leased_until timestamptz)
LANGUAGE sql STABLE
AS $$
    -- A live run is the one its kind's lease points at; by the kind's primary key, no lock.
    SELECT k.run_id, k.name, k.leased_by, k.leased_until
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name AND k.run_id = r.id
    WHERE r.id = ANY(p_run_ids)
$$;
COMMENT ON FUNCTION tickq.live_leases(bigint[]) IS
'The runs among p_run_ids that are still live (running, their kind''s lease on them), with the '
'dispatcher holding each and its lease''s end. A tick asks it of the reports it kept: one whose '
'run is still live, leased as it was when reported, was lost by an asynchronous failover and is '
'reported again (tickq.report_late_run). Reads only: no lock, no write.';
