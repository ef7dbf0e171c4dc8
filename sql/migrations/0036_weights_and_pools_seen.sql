-- Weights and pools seen everywhere (issue 23): `tickq status`, `tickq history` and the psql
-- view queue_status show a kind's or a run's weight and pools. CREATE OR REPLACE cannot change
-- a function's columns, so the API files create these anew (queue_status, the view over
-- queue_status_at, goes with it and is created again by sql/api/04_views.sql).
DROP FUNCTION IF EXISTS tickq.queue_status_at(timestamptz) CASCADE;
DROP FUNCTION IF EXISTS tickq.kind_history(text, integer, timestamptz);
DROP FUNCTION IF EXISTS tickq.run_detail(bigint, timestamptz);
