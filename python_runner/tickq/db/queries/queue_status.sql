SELECT
    kind, priority::text, schedule, state, due, running, due_at, next_due_at, run_id, leased_by,
    leased_until, attempts, failure_streak, last_outcome::text, last_finished_at, last_duration,
    irreversible, armed_at, armed_by, steps,
    nullif(paused_until, 'infinity') AS paused_until, paused_reason, paused_by,
    streak_outcome::text, weight, pools
FROM tickq.queue_status
-- Retired kinds (gone from the registry) are `tickq status --retired`'s (retired_kinds.sql).
WHERE state <> 'retired'
