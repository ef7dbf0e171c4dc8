-- job_run.slot named the global slot row (tickq.slot.n) a run held, one letter from
-- job_run.slots, the count of scheduled slots the run stands for: two meanings of "slot" side
-- by side. It is now slot_row, in the words the schema keeps for the rows of the slot limit
-- ("free slot rows", job_run.weight's "global slot rows"), never for a schedule's slots
-- (slots, slot_at, first_slot_at, slots_covered). A rename keeps every value; the API files,
-- applied after the migrations, read the new name.
ALTER TABLE tickq.job_run RENAME COLUMN slot TO slot_row;
COMMENT ON COLUMN tickq.job_run.slot_row IS
'The global slot row (tickq.slot.n) the run held while it ran, the first of them for a run of '
'weight more than 1 (every row it holds names it in tickq.slot.run_id). A row of the slot limit, '
'not a scheduled slot (slots, slot_at). Null for runs that ended before tickq recorded it.';
