-- upcoming_at gained the columns held (unarmed or paused: a kind no claim will take, or the run
-- a pause moved), paused_until and total (every run in the window, listed or not, so a list
-- cut at its limit can say how many more). CREATE OR REPLACE cannot change a return type: the
-- API file creates it anew.
DROP FUNCTION IF EXISTS tickq.upcoming_at(numeric, integer, timestamptz);
