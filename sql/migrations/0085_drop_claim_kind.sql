-- tickq.claim_kind(kind, dispatcher, now) was tickq.claim_manual without a person, granted to
-- the dispatcher role and called by nothing: tickq calls claim_manual, which takes the person
-- (NULL for none). Its grants and comment go with it.
DROP FUNCTION IF EXISTS tickq.claim_kind(text, text, timestamptz);
