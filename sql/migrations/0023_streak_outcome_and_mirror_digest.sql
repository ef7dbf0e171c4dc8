-- queue_status_at gained streak_outcome: the outcome of the failure streak a later run that was
-- no failure (interrupted) left standing, so `status` names it ("interrupted after timeout x4").
-- CREATE OR REPLACE cannot change a return type: the view over it goes first, and the API file
-- creates both anew.
DROP VIEW IF EXISTS tickq.queue_status;
DROP FUNCTION IF EXISTS tickq.queue_status_at(timestamptz);

-- command, cwd and env live only in the registry mirror (job_kind.registry). Its digest as the
-- last sync wrote it tells an edit of the registry file (the mirror untouched since) from a
-- mirror changed behind the registry's back. Null until a sync writes the row again: unknown,
-- so not called an edit.
ALTER TABLE tickq.job_kind ADD COLUMN registry_digest text;
COMMENT ON COLUMN tickq.job_kind.registry_digest IS
'md5 of the registry mirror (registry::text) as tickq.write_kind last wrote it; a mirror that no '
'longer matches was changed behind the registry''s back.';
