-- registry_edit: the typed column still held what the previous registry said (its mirror,
-- job_kind.registry, read by tickq.registry_mirror as it was before the sync: a STABLE function
-- sees the statement's snapshot, not the sync's writes), so the difference is an edit of the registry file, not a row
-- changed behind its back. command, cwd and env live only in the mirror, which could itself
-- have been edited: never called an edit. Settings have no mirror; their changes count as edits.
SELECT
    d.kind, d.field, d.stored_value, d.registry_value,
    CASE
        WHEN d.kind IS NULL OR d.field = 'kind' THEN true
        WHEN d.field IN ('registry', 'command', 'cwd', 'env') THEN false
        ELSE (b.registry -> d.field) IS NOT DISTINCT FROM d.stored_value
    END AS registry_edit
FROM tickq.sync_registry(%(registry)s::jsonb) AS d
LEFT JOIN LATERAL (SELECT tickq.registry_mirror(d.kind) AS registry) AS b ON true
