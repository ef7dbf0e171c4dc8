SELECT path, host, project, synced_at, synced, this_project
FROM tickq.queue_registry_at(%(source)s::jsonb)
