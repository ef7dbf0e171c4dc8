-- 0003: the claim and the status view on their fast paths (figures in bench/README.md).
--
-- The time zone CHECK on job_kind ran a plpgsql function with an exception block on every
-- update of a row, i.e. on every claim and report. A trigger now checks the zone only when it
-- is written. job_kind.last_run_id lets queue_status reach each kind's last finished run by
-- primary key instead of probing job_run per kind.

ALTER TABLE tickq.job_kind DROP CONSTRAINT timezone_known;

CREATE FUNCTION tickq.check_kind_timezone() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NOT tickq.is_timezone(NEW.timezone) THEN
        RAISE EXCEPTION 'kind "%": unknown time zone "%"', NEW.name, NEW.timezone
            USING ERRCODE = 'check_violation',
            HINT = 'Use an IANA name such as Europe/London.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_kind_timezone() IS
'Trigger: refuses a job_kind row whose time zone PostgreSQL does not know, checked only when the '
'zone is written.';

CREATE TRIGGER timezone_known
BEFORE INSERT OR UPDATE OF timezone ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_timezone();

ALTER TABLE tickq.job_kind ADD COLUMN last_run_id bigint;
COMMENT ON COLUMN tickq.job_kind.last_run_id IS
'The last finished run of the kind, kept by tickq.finish_run (housekeeping never prunes it: it '
'keeps the latest runs of every kind).';
UPDATE tickq.job_kind AS k SET last_run_id = (
    SELECT r.id FROM tickq.job_run AS r
    WHERE r.kind = k.name AND r.finished_at IS NOT NULL
    ORDER BY r.finished_at DESC LIMIT 1
);
