-- The health check's evidence that the timer fires: committed without waiting for the WAL flush
-- (a server crash may lose this one row; the next tick writes it again), so an idle tick, whose
-- only write this is, does not wait on the disk.
SELECT set_config('synchronous_commit', 'off', true), tickq.record_tick(%(dispatcher)s, %(host)s)
