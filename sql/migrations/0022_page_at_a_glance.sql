-- The status page's header names the failing kinds (failing_kinds) and its window begins when
-- the queue began if that is later (tickq.report_window_start_at); the timeline draws runs at
-- their real length and carries each bar's longest run (longest_run). CREATE OR REPLACE cannot
-- change a return type: the API file creates both anew.
DROP FUNCTION IF EXISTS tickq.report_header_at(numeric, timestamptz);
DROP FUNCTION IF EXISTS tickq.report_timeline_at(numeric, timestamptz);
