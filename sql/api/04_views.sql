-- Views for people in psql and for `tickq status`. Each view is its function at now(); the
-- functions take the time so tests and the simulator can move the clock.

DROP VIEW IF EXISTS tickq.queue_status;
DROP VIEW IF EXISTS tickq.stale_due;
-- 0017 added the pause columns to the result.
DROP FUNCTION IF EXISTS tickq.queue_status_at(timestamptz);

CREATE OR REPLACE FUNCTION tickq.queue_status_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (
    kind text,
    priority tickq.priority,
    schedule text,
    state text,
    due boolean,
    running boolean,
    due_at timestamptz,
    next_due_at timestamptz,
    run_id bigint,
    leased_by text,
    leased_until timestamptz,
    attempts integer,
    failure_streak integer,
    last_outcome tickq.outcome,
    last_finished_at timestamptz,
    last_duration interval,
    paused_until timestamptz,
    paused_reason text,
    paused_by text
)
LANGUAGE sql STABLE
AS $$
    SELECT
        k.name,
        k.priority,
        tickq.describe_schedule(k.every, k.at_times, k.on_days, k.timezone, p_now),
        CASE
            WHEN k.retired_at IS NOT NULL THEN 'retired'
            WHEN k.run_id IS NOT NULL THEN 'running'
            WHEN NOT k.enabled THEN 'disabled'
            WHEN k.paused_until > p_now THEN 'paused'
            WHEN greatest(k.due_at, k.paused_until) <= p_now - s.stale_after THEN 'stale'
            WHEN k.due_at <= p_now THEN 'due'
            ELSE 'waiting'
        END,
        k.enabled AND k.run_id IS NULL AND k.due_at <= p_now AND NOT coalesce(k.paused_until > p_now, false),
        k.run_id IS NOT NULL,
        k.due_at,
        CASE
            WHEN NOT k.enabled OR k.run_id IS NOT NULL THEN NULL
            WHEN k.paused_until > p_now THEN nullif(greatest(k.due_at, k.paused_until), 'infinity')
            ELSE k.due_at
        END,
        k.run_id,
        k.leased_by,
        k.leased_until,
        k.attempts,
        k.failure_streak,
        last_run.outcome,
        last_run.finished_at,
        last_run.duration,
        CASE WHEN k.paused_until > p_now THEN k.paused_until END,
        CASE WHEN k.paused_until > p_now THEN k.paused_reason END,
        CASE WHEN k.paused_until > p_now THEN k.paused_by END
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    -- The last finished run by primary key (job_kind.last_run_id): never a scan of the history.
    -- LIMIT 1 keeps this a per-kind index probe; as a plain join the planner prefers hashing
    -- all of job_run.
    LEFT JOIN LATERAL (
        SELECT r.outcome, r.finished_at, r.duration
        FROM tickq.job_run AS r
        WHERE r.id = k.last_run_id
        LIMIT 1
    ) AS last_run ON true
    ORDER BY k.retired_at IS NOT NULL, k.priority, k.name
$$;
COMMENT ON FUNCTION tickq.queue_status_at(timestamptz) IS
'One row per kind as of p_now: state (running, due, stale, waiting, paused, disabled, retired), '
'due and running flags, next due time (a paused kind: not before its pause ends), lease, '
'failure streak, the last finished run, and the pause (until, reason, by) while it lasts.';

CREATE VIEW tickq.queue_status AS
SELECT * FROM tickq.queue_status_at(now());
COMMENT ON VIEW tickq.queue_status IS
'One row per kind, now: due or not, running or not, last outcome and finish, failure streak, next due.';

CREATE OR REPLACE FUNCTION tickq.stale_due_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, priority tickq.priority, due_at timestamptz, waiting interval)
LANGUAGE sql STABLE
AS $$
    SELECT k.name, k.priority, k.due_at, p_now - k.due_at
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    -- Waiting while paused is on purpose: a pause that ended counts as due since its end.
    WHERE k.enabled AND k.run_id IS NULL AND greatest(k.due_at, k.paused_until) <= p_now - s.stale_after
    ORDER BY k.due_at, k.name
$$;
COMMENT ON FUNCTION tickq.stale_due_at(timestamptz) IS
'Kinds due and left unclaimed longer than settings.stale_after as of p_now, longest wait first '
'(a paused kind is not stale: it waits on purpose).';

CREATE VIEW tickq.stale_due AS
SELECT * FROM tickq.stale_due_at(now());
COMMENT ON VIEW tickq.stale_due IS
'Kinds due and left unclaimed longer than the stale threshold (default 15 minutes): a slot '
'shortage or a starving lane. Every tick logs one warning per row.';
