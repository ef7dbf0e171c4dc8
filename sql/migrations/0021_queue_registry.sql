-- The registry that last synced this queue: one row ("only" = true; ONLY is a reserved word), written by
-- tickq.sync_registry from the "source" the runner sends (the registry file's absolute path and
-- the host). A sync from another registry that would retire kinds is refused unless it says it
-- means to replace the queue. The table is made with IF NOT EXISTS and each column added with
-- ADD COLUMN IF NOT EXISTS, so other migrations may add columns of their own in either order.
CREATE TABLE IF NOT EXISTS tickq.queue_registry ("only" boolean PRIMARY KEY DEFAULT true CHECK ("only"));
ALTER TABLE tickq.queue_registry ADD COLUMN IF NOT EXISTS path text;
ALTER TABLE tickq.queue_registry ADD COLUMN IF NOT EXISTS host text;
ALTER TABLE tickq.queue_registry ADD COLUMN IF NOT EXISTS synced_at timestamptz;
COMMENT ON TABLE tickq.queue_registry IS
'One row: what is known of the registry that synced this queue. path and host: the registry '
'file (absolute, resolved) and the host of the last sync that named one (tickq.sync_registry); '
'synced_at: when.';
