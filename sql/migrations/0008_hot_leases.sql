-- 0008: a lease taken and a slot filled without writing any index entry.
--
-- PostgreSQL updates a row in place on its page (a HOT update: no new index entries, and the
-- old version is pruned on the page) only when no indexed column changes and the page has
-- room. Leasing a kind changed run_id, which two indexes of job_kind covered (job_kind_run, and
-- the predicate of job_kind_claimable), and filling a slot changed slot.run_id, which
-- slot_holds_one_run covered: every claim wrote five index entries per kind, and a report as
-- many again. Now:
-- - job_kind_claimable covers enabled kinds, leased or not; claims skip a leased kind by its
--   run_id (at most settings.slots kinds are leased, so a lane holds few of them);
-- - a report finds its kind through the run's primary key (job_run.kind), not job_kind_run;
-- - each slot row carries its lease expiry (a copy of job_kind.leased_until, written in the
--   same statement), so a claim finds expired leases among the few slot rows;
-- - each run records the slot it holds (job_run.slot), so a report frees it by primary key;
-- - the pages of job_kind, slot and job_run keep room for the new row versions.
-- Releasing a lease still moves due_at, which job_kind_claimable covers: one write with index
-- entries per report, where there were two per cycle.

ALTER TABLE tickq.slot ADD COLUMN leased_until timestamptz;
COMMENT ON COLUMN tickq.slot.leased_until IS
'When the lease of the run in this slot expires: a copy of job_kind.leased_until, written with '
'it, so claims find expired leases among the slot rows.';
UPDATE tickq.slot AS sl SET leased_until = k.leased_until
FROM tickq.job_kind AS k
WHERE sl.run_id = k.run_id;
ALTER TABLE tickq.slot DROP CONSTRAINT slot_holds_one_run;

ALTER TABLE tickq.job_run ADD COLUMN slot integer;
COMMENT ON COLUMN tickq.job_run.slot IS
'The slot (tickq.slot.n) the run held while it ran; null for runs that ended before tickq '
'recorded it.';
UPDATE tickq.job_run AS r SET slot = sl.n
FROM tickq.slot AS sl
WHERE r.id = sl.run_id;
ALTER TABLE tickq.slot SET (fillfactor = 50);

DROP INDEX tickq.job_kind_run;
DROP INDEX tickq.job_kind_claimable;
CREATE INDEX job_kind_claimable ON tickq.job_kind (priority, due_at, name) WHERE enabled;
ALTER TABLE tickq.job_kind SET (fillfactor = 70);

ALTER TABLE tickq.job_run SET (fillfactor = 90);
