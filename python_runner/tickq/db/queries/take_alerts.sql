SELECT alert_id, kind, event, condition::text, failure_streak, last_outcome::text, output_tail
FROM tickq.take_alerts()
