-- 0011: an `every` cadence may be shifted by an offset (registry key `offset`), so kinds that
-- share a cadence can be spread over it instead of all falling due at the same aligned instant.
--
-- every_offset is NULL for calendar kinds and for cadences without an offset (a zero offset is
-- stored as NULL, so one schedule has one spelling). Its rule is checked by a trigger of its
-- own that fires only when the schedule columns are written (sync_registry), not on the claims
-- and reports that write job_kind many times a tick.

ALTER TABLE tickq.job_kind ADD COLUMN every_offset interval;
COMMENT ON COLUMN tickq.job_kind.every_offset IS
'Shift of an every cadence from its clock-aligned slots (0 <= offset < every); NULL for no '
'shift and for calendar kinds. Written only by tickq.sync_registry.';

CREATE FUNCTION tickq.check_kind_offset() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.every_offset IS NOT NULL AND (NEW.every IS NULL OR NEW.every_offset <= '0'::interval
        OR NEW.every_offset >= NEW.every) THEN
        RAISE EXCEPTION 'kind "%": every_offset must be above 0 and below every (%), got %',
            NEW.name, NEW.every, NEW.every_offset
            USING ERRCODE = 'check_violation', CONSTRAINT = 'every_offset_in_cadence',
            SCHEMA = 'tickq', TABLE = 'job_kind',
            HINT = 'The registry file is checked by tickq.sync_registry first.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_kind_offset() IS
'Trigger: refuses a job_kind row whose every_offset is not inside its cadence (0 < offset < '
'every, and only on an every cadence); fires only when every or every_offset is written.';

CREATE TRIGGER kind_offset_valid
BEFORE INSERT OR UPDATE OF every, every_offset ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_offset();
