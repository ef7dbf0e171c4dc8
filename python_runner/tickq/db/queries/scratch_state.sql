-- What a scratch database holds that the template did not (tickq.scratch_state), as text.
SELECT tickq.scratch_state()::text AS state
