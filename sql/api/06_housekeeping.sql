-- Housekeeping (the built-in kind tickq.housekeeping, every settings.housekeeping_every) and
-- alert bookkeeping.

CREATE OR REPLACE FUNCTION tickq.housekeeping(
    p_batch integer DEFAULT 50000,
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (lost integer, runs_pruned integer, drift_pruned integer, alerts_pruned integer)
LANGUAGE plpgsql
AS $$
DECLARE
    v_settings tickq.settings;
    v_cutoff timestamptz;
BEGIN
    SELECT * INTO STRICT v_settings FROM tickq.settings;
    v_cutoff := p_now - v_settings.retention;
    lost := (SELECT count(*) FROM tickq.expire_leases(p_now));

    -- Old runs go, but never the latest keep_runs of a kind, nor a live run. At most p_batch a
    -- time so one housekeeping run stays short; the next one carries on.
    WITH doomed AS (
        SELECT r.id
        FROM tickq.job_run AS r
        WHERE r.finished_at < v_cutoff
            AND r.id < coalesce((
                SELECT keep.id FROM tickq.job_run AS keep
                WHERE keep.kind = r.kind
                ORDER BY keep.id DESC
                OFFSET v_settings.keep_runs - 1 LIMIT 1
            ), 0)
        ORDER BY r.finished_at
        LIMIT p_batch
    ), gone AS (
        DELETE FROM tickq.job_run AS r USING doomed AS d WHERE r.id = d.id
        RETURNING r.kind, r.outcome, r.slots, extract(EPOCH FROM r.duration) AS seconds, r.finished_at
    ), counted AS (
        -- What the metrics' counters count, kept in run_total so they never fall.
        SELECT g.kind, g.outcome, count(*) AS runs, sum(greatest(g.slots - 1, 0)) AS merged,
            count(g.seconds) AS timed, coalesce(sum(g.seconds), 0) AS seconds,
            array(
                SELECT (SELECT count(*) FROM gone AS h
                    WHERE h.kind = g.kind AND h.outcome = g.outcome AND h.seconds <= b.bound)
                FROM unnest(tickq.metrics_buckets()) WITH ORDINALITY AS b (bound, n) ORDER BY b.n
            ) AS buckets,
            max(g.finished_at) AS last_finished_at
        FROM gone AS g
        GROUP BY g.kind, g.outcome
    ), kept AS (
        INSERT INTO tickq.run_total AS t (kind, outcome, runs, merged_slots, timed_runs, seconds, buckets,
            last_finished_at)
        SELECT c.kind, c.outcome, c.runs, c.merged, c.timed, c.seconds, c.buckets, c.last_finished_at
        FROM counted AS c
        ON CONFLICT (kind, outcome) DO UPDATE SET
            runs = t.runs + excluded.runs,
            merged_slots = t.merged_slots + excluded.merged_slots,
            timed_runs = t.timed_runs + excluded.timed_runs,
            seconds = t.seconds + excluded.seconds,
            buckets = array(
                SELECT coalesce(t.buckets[i], 0) + excluded.buckets[i]
                FROM generate_subscripts(excluded.buckets, 1) AS i ORDER BY i
            ),
            last_finished_at = greatest(t.last_finished_at, excluded.last_finished_at)
        RETURNING t.runs
    )
    SELECT coalesce(sum(c.runs), 0) INTO runs_pruned FROM counted AS c;

    WITH doomed AS (
        SELECT d.id
        FROM tickq.drift AS d
        WHERE d.detected_at < v_cutoff
            AND d.id < coalesce((
                SELECT keep.id FROM tickq.drift AS keep
                WHERE keep.kind IS NOT DISTINCT FROM d.kind
                ORDER BY keep.id DESC
                OFFSET v_settings.keep_runs - 1 LIMIT 1
            ), 0)
        ORDER BY d.detected_at
        LIMIT p_batch
    ), gone AS (
        DELETE FROM tickq.drift AS t USING doomed AS d WHERE t.id = d.id RETURNING t.id
    )
    SELECT count(*) INTO drift_pruned FROM gone;

    WITH gone AS (
        DELETE FROM tickq.alert AS a WHERE a.cleared_at < v_cutoff RETURNING a.id
    )
    SELECT count(*) INTO alerts_pruned FROM gone;
    RETURN NEXT;
END
$$;
COMMENT ON FUNCTION tickq.housekeeping(integer, timestamptz) IS
'The built-in kind tickq.housekeeping: turns expired leases into lost runs, prunes job_run and '
'the drift log older than settings.retention (keeping at least the latest keep_runs of each '
'kind, and never a live run; what they counted joins run_total) and cleared alerts, at most '
'p_batch rows each per call.';

CREATE OR REPLACE FUNCTION tickq.take_alerts(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    alert_id bigint,
    kind text,
    event text,
    condition tickq.alert_condition,
    failure_streak integer,
    last_outcome tickq.outcome,
    output_tail text
)
LANGUAGE plpgsql
AS $$
#variable_conflict use_column
BEGIN
    -- Raise: an open row per (kind, condition) is unique, so of two dispatchers looking at once
    -- exactly one inserts it and gets the event. Clear: the UPDATE re-checks cleared_at under the
    -- row lock, so exactly one gets the recovery.
    RETURN QUERY
    WITH wanted AS (
        SELECT k.name AS kind, 'failing'::tickq.alert_condition AS condition, k.failure_streak
        FROM tickq.job_kind AS k CROSS JOIN tickq.settings AS s
        WHERE k.retired_at IS NULL AND k.failure_streak >= s.alert_after
        UNION ALL
        SELECT st.kind, 'stale', k.failure_streak
        FROM tickq.stale_due_at(p_now) AS st
        INNER JOIN tickq.job_kind AS k ON k.name = st.kind
    ),
    raised AS (
        INSERT INTO tickq.alert AS a (kind, condition, raised_at, failure_streak)
        SELECT w.kind, w.condition, p_now, w.failure_streak FROM wanted AS w
        ON CONFLICT (kind, condition) WHERE cleared_at IS NULL DO NOTHING
        RETURNING a.id, a.kind, a.condition
    ),
    cleared AS (
        UPDATE tickq.alert AS a SET cleared_at = p_now
        WHERE a.cleared_at IS NULL
            AND NOT EXISTS (SELECT FROM wanted AS w WHERE w.kind = a.kind AND w.condition = a.condition)
        RETURNING a.id, a.kind, a.condition
    ),
    events AS (
        SELECT r.id, r.kind, r.condition::text AS event, r.condition FROM raised AS r
        UNION ALL
        SELECT c.id, c.kind, 'recovered', c.condition FROM cleared AS c
    )
    SELECT e.id, e.kind, e.event, e.condition, k.failure_streak::integer, last_run.outcome, last_run.output_tail::text
    FROM events AS e
    INNER JOIN tickq.job_kind AS k ON k.name = e.kind
    LEFT JOIN tickq.job_run AS last_run ON last_run.id = k.last_run_id
    ORDER BY e.id;
END
$$;
COMMENT ON FUNCTION tickq.take_alerts(timestamptz) IS
'Alert bookkeeping: returns each event to send now, once across all dispatchers: failing (the '
'streak reached settings.alert_after), stale (due and unclaimed past stale_after), and recovered '
'(either condition ended), with the kind''s streak and last run.';
