-- Another scratch database's state (scratch_state.sql) written in this one (tickq.scratch_restore).
SELECT tickq.scratch_restore(%(state)s::jsonb)
