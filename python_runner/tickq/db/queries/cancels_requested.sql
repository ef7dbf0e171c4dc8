-- Asked every few seconds while runs go on: not worth waiting on the WAL flush for the poll row.
SELECT set_config('synchronous_commit', 'off', true) AS _, c.run_id, c.cancel_by, c.cancel_reason
FROM tickq.cancels_requested(%(dispatcher)s, %(run_ids)s::bigint[]) AS c
