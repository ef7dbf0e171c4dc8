-- Migration 0085_drop_claim_kind.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- tickq.claim_kind(kind, dispatcher, now) was tickq.claim_manual without a person, granted to
-- the dispatcher role and called by nothing: tickq calls claim_manual, which takes the person
-- (NULL for none). Its grants and comment go with it.
DROP FUNCTION IF EXISTS tickq.claim_kind(text, text, timestamptz);
