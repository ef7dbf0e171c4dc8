-- 0004: the slot limit as rows. A claim used to lock the settings row to count live leases,
-- which made claims from every dispatcher wait for each other's commit. Now each of the
-- settings.slots slots is a row: a claim takes free slot rows with FOR UPDATE SKIP LOCKED and
-- writes its run into each, so concurrent claims take different slots and never wait, and a
-- lease cannot exist without a slot of its own (slot.run_id is unique).

CREATE TABLE tickq.slot (
    n integer PRIMARY KEY CONSTRAINT slot_number_positive CHECK (n >= 1),
    run_id bigint CONSTRAINT slot_holds_one_run UNIQUE
);
COMMENT ON TABLE tickq.slot IS
'One row per slot (settings.slots of them, kept by tickq.sync_registry). run_id is the live run '
'holding the slot, or null when free. Claims take free rows with FOR UPDATE SKIP LOCKED; a '
'report or an expired lease frees the row.';

-- Slots for the runs live now, then free ones up to the limit.
INSERT INTO tickq.slot (n, run_id)
SELECT
    row_number() OVER (ORDER BY k.run_id) AS n,
    k.run_id
FROM tickq.job_kind AS k
WHERE k.run_id IS NOT NULL;
INSERT INTO tickq.slot (n)
SELECT g.n FROM generate_series(1, (SELECT s.slots FROM tickq.settings AS s)) AS g (n)
ON CONFLICT (n) DO NOTHING;

-- Claim order is (priority, due_at, name): with clock-aligned cadences many kinds share a due
-- time, and the name makes the order total without sorting the tie.
DROP INDEX tickq.job_kind_claimable;
DROP INDEX tickq.job_kind_claimable_by_due;
CREATE INDEX job_kind_claimable ON tickq.job_kind (priority, due_at, name)
WHERE enabled AND run_id IS NULL;
CREATE INDEX job_kind_claimable_by_due ON tickq.job_kind (due_at, name)
WHERE enabled AND run_id IS NULL;
