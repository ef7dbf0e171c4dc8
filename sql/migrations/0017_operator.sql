-- 0017: an operator's state beside the registry's (pauses), and the last tick of each host (the
-- health check's "is the timer still firing").
--
-- A pause is the operator's, not the registry's: sync_registry never writes these columns, so a
-- kind paused by hand stays paused across registry edits, and `enabled` (the registry's) still
-- wins. No CHECK constraint here: each one is compiled again in every statement that writes
-- job_kind, claims included (see 0010); pause_kind writes the three columns together.

ALTER TABLE tickq.job_kind
ADD COLUMN paused_until timestamptz,
ADD COLUMN paused_reason text,
ADD COLUMN paused_by text;
COMMENT ON COLUMN tickq.job_kind.paused_until IS
'Set by tickq.pause_kind: claims skip the kind until then (infinity: until tickq.resume_kind). '
'A pause whose time has passed has ended by itself.';
COMMENT ON COLUMN tickq.job_kind.paused_reason IS 'Why the kind was paused (the operator''s words).';
COMMENT ON COLUMN tickq.job_kind.paused_by IS 'Who paused the kind (user@host of the tickq pause).';

CREATE TABLE tickq.dispatcher_tick (
    host text PRIMARY KEY,
    dispatcher text NOT NULL,
    last_tick_at timestamptz NOT NULL
);
COMMENT ON TABLE tickq.dispatcher_tick IS
'The last tick that ended on each host (written by tickq.record_tick): a timer that stopped '
'firing shows in tickq.health_problems. One row per host, since every tick is a new process.';
