-- 0010: the single-column rules of the hot tables move from CHECK constraints to domains.
--
-- PostgreSQL reads every CHECK constraint of a table back from its stored text (stringToNode)
-- and prepares it again in each statement that writes the table; a claim-and-report cycle
-- writes job_kind, job_run and slot rows in six statements and so parsed 16 constraints, about
-- a seventh of its CPU (bench/README.md). A domain's CHECK is prepared once per session (the
-- type cache keeps it) and is checked only where a statement assigns that column. Same rules,
-- same constraint names, one domain per column so that an error names the column's domain
-- (e.g. 'value for domain tickq.run_attempt violates check constraint "attempt_positive"').
-- The two rules that span columns (lease_complete, finished_unless_running) stay CHECKs.
--
-- Changing a column to a domain with a CHECK rewrites the table once (job_run included), under
-- an ACCESS EXCLUSIVE lock: dispatchers wait for this migration, then go on.

CREATE DOMAIN tickq.kind_attempts AS integer
CONSTRAINT attempts_not_negative CHECK (value >= 0);
COMMENT ON DOMAIN tickq.kind_attempts IS
'job_kind.attempts: tries of the current slot so far, 0 or more.';

CREATE DOMAIN tickq.failure_streak AS integer
CONSTRAINT failure_streak_not_negative CHECK (value >= 0);
COMMENT ON DOMAIN tickq.failure_streak IS
'job_kind.failure_streak: failed, timed-out or lost runs in a row, 0 or more.';

CREATE DOMAIN tickq.run_attempt AS integer
CONSTRAINT attempt_positive CHECK (value >= 1);
COMMENT ON DOMAIN tickq.run_attempt IS
'job_run.attempt: which try of its slot a run is, from 1.';

CREATE DOMAIN tickq.run_slots AS integer
CONSTRAINT slots_not_negative CHECK (value >= 0);
COMMENT ON DOMAIN tickq.run_slots IS
'job_run.slots: how many scheduled slots a run stands for, 0 or more.';

CREATE DOMAIN tickq.output_tail AS text
CONSTRAINT output_tail_bounded CHECK (char_length(value) <= 65536);
COMMENT ON DOMAIN tickq.output_tail IS
'job_run.output_tail: the last 64 KiB (65,536 characters) of a command''s output at most.';

CREATE DOMAIN tickq.slot_number AS integer
CONSTRAINT slot_number_positive CHECK (value >= 1);
COMMENT ON DOMAIN tickq.slot_number IS
'slot.n: a slot''s number, from 1.';

ALTER TABLE tickq.job_kind
DROP CONSTRAINT attempts_not_negative,
DROP CONSTRAINT failure_streak_not_negative,
ALTER COLUMN attempts TYPE tickq.kind_attempts,
ALTER COLUMN failure_streak TYPE tickq.failure_streak;

ALTER TABLE tickq.job_run
DROP CONSTRAINT attempt_positive,
DROP CONSTRAINT slots_not_negative,
DROP CONSTRAINT output_tail_bounded,
ALTER COLUMN attempt TYPE tickq.run_attempt,
ALTER COLUMN slots TYPE tickq.run_slots,
ALTER COLUMN output_tail TYPE tickq.output_tail;

ALTER TABLE tickq.slot
DROP CONSTRAINT slot_number_positive,
ALTER COLUMN n TYPE tickq.slot_number;
