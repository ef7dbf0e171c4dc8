SELECT
    c.run_id,
    c.kind,
    c.leased_by,
    c.leased_until,
    c.polled_at,
    c.dispatcher_seen
FROM tickq.request_cancel(%(target)s, %(reason)s, %(claimed_by)s) AS c
