-- Migration 0060_project_identity.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- A project's identity survives a deploy: the queue records the registry of record as given
-- (a `current` link not followed, so every release behind it is the same file), the file with
-- links followed, and the registry's project name (settings.project) when it has one. Until now
-- path held the file with links followed; it is copied into resolved, so a queue synced before
-- still knows its project by either path.
CREATE TABLE IF NOT EXISTS tickq.queue_registry ("only" boolean PRIMARY KEY DEFAULT true CHECK ("only"));
ALTER TABLE tickq.queue_registry ADD COLUMN IF NOT EXISTS resolved text;
ALTER TABLE tickq.queue_registry ADD COLUMN IF NOT EXISTS project text;
UPDATE tickq.queue_registry AS q SET resolved = q.path
WHERE q.resolved IS NULL AND q.path IS NOT NULL;
COMMENT ON TABLE tickq.queue_registry IS
'One row: what is known of the registry that synced this queue. path: the registry file as the '
'user named it (absolute, links not followed); resolved: the same with links followed; project: '
'its settings.project, if any; host: where the last sync that named a file came from; synced_at: '
'when; digest: see its column. tickq.same_project says whether another registry is this project.';
COMMENT ON COLUMN tickq.queue_registry.path IS
'The registry file as given (absolute, links not followed: a deploy''s `current` link stays one path).';
COMMENT ON COLUMN tickq.queue_registry.resolved IS
'The registry file with every link followed.';
COMMENT ON COLUMN tickq.queue_registry.project IS
'The registry''s settings.project: a name that makes two checkouts (other paths, other hosts) one project.';
