SELECT name FROM tickq.job_kind WHERE retired_at IS NULL ORDER BY name
