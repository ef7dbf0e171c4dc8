-- Views for people in psql and for `tickq status`. Each view is its function at now(); the
-- functions take the time so tests and the simulator can move the clock.

-- A change of a function's columns drops it and its view first: CREATE OR REPLACE can only add
-- columns at a view's end.

-- A chain's steps (tickq.job_step, sql/api/08_chain.sql) in one line for queue_status.
CREATE OR REPLACE FUNCTION tickq.chain_summary(
    p_run_id bigint
) RETURNS text
LANGUAGE sql STABLE
AS $$
    -- e.g. "3/5 ok, failed at sf_push" or "2/5 ok from step 3 (resumed), timeout at ingest".
    SELECT format('%s/%s ok', count(*) FILTER (WHERE s.outcome = 'ok'), jsonb_array_length(k.registry -> 'steps'))
        || CASE WHEN min(s.n) > 1 THEN format(' from step %s (resumed)', min(s.n)) ELSE '' END
        || coalesce(', ' || string_agg(s.outcome || ' at ' || s.name, ', ' ORDER BY s.n)
            FILTER (WHERE s.outcome <> 'ok'), '')
    FROM tickq.job_run AS r
    INNER JOIN tickq.job_kind AS k ON r.kind = k.name
    LEFT JOIN tickq.job_step AS s ON r.id = s.run_id
    WHERE r.id = p_run_id AND k.registry ? 'steps'
    GROUP BY k.registry
$$;
COMMENT ON FUNCTION tickq.chain_summary(bigint) IS
'One line on the steps of a chain''s run: how many of the chain''s steps ended ok, where a '
'resumed run started, and each step that did not end ok; null for a run of a plain kind.';

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
    irreversible boolean,
    armed_at timestamptz,
    armed_by text,
    steps text,
    paused_until timestamptz,
    paused_reason text,
    paused_by text,
    streak_outcome tickq.outcome,
    weight integer,
    pools text[]
)
LANGUAGE sql STABLE
AS $$
    SELECT
        k.name,
        k.priority,
        tickq.describe_schedule(tickq.schedule_of(k)),
        coalesce(tickq.kind_held(k, p_now), CASE
            -- as tickq.stale_due_at: a slot the next claim skips (catch_up) is not waited for
            WHEN greatest(k.due_at, k.paused_until) <= p_now - s.stale_after AND NOT (k.catch_up IS NOT NULL
                AND k.name IN (SELECT c.name FROM tickq.kinds_to_catch_up(p_now) AS c (name))) THEN 'stale'
            WHEN k.due_at <= p_now THEN 'due'
            ELSE 'waiting'
        END),
        tickq.kind_due(k, p_now),
        k.run_id IS NOT NULL,
        k.due_at,
        CASE
            WHEN NOT k.enabled OR k.run_id IS NOT NULL OR (k.irreversible AND k.armed_at IS NULL) THEN NULL
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
        k.irreversible,
        k.armed_at,
        k.armed_by,
        -- Only chains pay for the summary of their last run's steps.
        CASE WHEN k.registry ? 'steps' THEN tickq.chain_summary(k.last_run_id) END,
        CASE WHEN k.paused_until > p_now THEN k.paused_until END,
        CASE WHEN k.paused_until > p_now THEN k.paused_reason END,
        CASE WHEN k.paused_until > p_now THEN k.paused_by END,
        -- The streak's own outcome when the last run was no failure (interrupted) and left it
        -- standing: the latest failure, found by job_run_kind_id back past that run.
        CASE WHEN k.failure_streak > 0 AND last_run.outcome NOT IN ('failed', 'timeout', 'lost') THEN (
            SELECT r.outcome FROM tickq.job_run AS r
            WHERE r.kind = k.name AND r.outcome IN ('failed', 'timeout', 'lost')
            ORDER BY r.id DESC LIMIT 1)
        ELSE last_run.outcome END,
        k.weight::integer,
        k.pools
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
'One row per kind as of p_now: state (running, due, stale, waiting, paused, disabled, retired, '
'unarmed: an irreversible kind no person has run by hand yet), due and running flags, next due '
'time (a paused kind: not before its pause ends), lease, failure streak, the last finished run, '
'who armed an irreversible kind and when, for a chain a summary of its last run''s steps, and '
'the pause (until, reason, by) while it lasts, and the outcome of the failure streak (the last '
'run''s, or the latest failure''s when an interrupted run left the streak standing); the '
'global slots each of its runs takes (weight) and the pools it names.';

CREATE OR REPLACE VIEW tickq.queue_status AS
SELECT * FROM tickq.queue_status_at(now());
COMMENT ON VIEW tickq.queue_status IS
'One row per kind, now: due or not, running or not, last outcome and finish, failure streak, next '
'due, weight and pools.';

CREATE OR REPLACE FUNCTION tickq.stale_due_at(
    p_now timestamptz DEFAULT now()
) RETURNS TABLE (kind text, priority tickq.priority, due_at timestamptz, waiting interval)
LANGUAGE sql STABLE
AS $$
    SELECT k.name, k.priority, k.due_at, p_now - k.due_at
    FROM tickq.job_kind AS k
    CROSS JOIN tickq.settings AS s
    -- Waiting while paused is on purpose: a pause that ended counts as due since its end.
    WHERE tickq.kind_claimable(k) AND k.run_id IS NULL
        AND greatest(k.due_at, k.paused_until) <= p_now - s.stale_after
        -- A slot later than the kind's catch_up is skipped by the next claim, not waited for.
        AND NOT (k.catch_up IS NOT NULL AND k.name IN (SELECT c.name FROM tickq.kinds_to_catch_up(p_now) AS c (name)))
    ORDER BY k.due_at, k.name
$$;
COMMENT ON FUNCTION tickq.stale_due_at(timestamptz) IS
'Kinds due and left unclaimed longer than settings.stale_after as of p_now, longest wait first '
'(an unarmed irreversible kind waits for a person, not a slot: queue_status shows it as unarmed; '
'a paused kind is not stale: it waits on purpose; nor is a kind due later than its catch_up, whose '
'slot the next claim skips).';

CREATE OR REPLACE VIEW tickq.stale_due AS
SELECT * FROM tickq.stale_due_at(now());
COMMENT ON VIEW tickq.stale_due IS
'Kinds due and left unclaimed longer than the stale threshold (default 15 minutes): a slot '
'shortage or a starving lane. Every tick logs one warning per row.';
