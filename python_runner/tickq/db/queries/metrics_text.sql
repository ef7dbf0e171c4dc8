SELECT tickq.metrics_text() AS text
