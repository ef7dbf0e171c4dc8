-- Function signatures and views the API files no longer create, dropped once here so that the
-- re-applied API files (sql/api) create only what they define, with CREATE OR REPLACE.
--
-- Views first: each depends on the function it selects from. The API files re-create all three.
DROP VIEW IF EXISTS tickq.queue_status;
DROP VIEW IF EXISTS tickq.stale_due;
DROP VIEW IF EXISTS tickq.capacity;
-- Return types that changed: queue_status_at gained the arming, steps and pause columns;
-- finish_run returns one record instead of a table, report_run calls it as an expression;
-- live_run returns nothing; simulate returns where each kind's worst wait began and what it
-- waited behind. CREATE OR REPLACE cannot change a return type: the API files create them anew.
DROP FUNCTION IF EXISTS tickq.queue_status_at(timestamptz);
DROP FUNCTION IF EXISTS tickq.report_run(bigint, text, tickq.outcome, integer, text, interval, timestamptz);
DROP FUNCTION IF EXISTS tickq.finish_run(bigint, tickq.outcome, integer, text, interval, timestamptz);
DROP FUNCTION IF EXISTS tickq.live_run(bigint, text, timestamptz);
DROP FUNCTION IF EXISTS tickq.simulate(numeric, jsonb, timestamptz);
-- Claims write their runs and leases themselves: the internal lease_kinds is gone.
DROP FUNCTION IF EXISTS tickq.lease_kinds(text[], boolean, text, timestamptz);
DROP FUNCTION IF EXISTS tickq.lease_kinds(text[], integer[], boolean, text, timestamptz);
