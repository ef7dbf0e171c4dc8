-- tickq.claim_fit returns one record, not a set, so that claim_jobs calls it as a plain
-- expression (no set-returning function scan in every claim that has weighted or pooled
-- candidates: bench/claim_instructions.py --weighted). CREATE OR REPLACE cannot change a
-- function's return type, so the API file creates it anew.
DROP FUNCTION IF EXISTS tickq.claim_fit(text[], integer, integer, boolean, timestamptz, timestamptz);
