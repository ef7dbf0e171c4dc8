SELECT slots, slots_in_use, kinds, stale, failing, disabled, paused, unarmed, drift_recent,
    window_start, window_end, timezone, tick, stale_after, failing_kinds
FROM tickq.report_header_at(%(hours)s::numeric, coalesce(%(now)s::timestamptz, now()))
