SELECT k.kind, q.state
FROM unnest(%(kinds)s::text[]) AS k (kind)
LEFT JOIN tickq.queue_status AS q ON k.kind = q.kind
ORDER BY k.kind
