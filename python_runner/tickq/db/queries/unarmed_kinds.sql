SELECT kind FROM tickq.queue_status
WHERE state = 'unarmed' AND kind = ANY(%(kinds)s::text[])
ORDER BY kind
