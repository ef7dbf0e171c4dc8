-- A schedule as one value: the eight schedule columns a job_kind (and an agent) holds, as
-- tickq.next_slot, slots_between, last_slot and describe_schedule take them. tickq.schedule_of
-- (sql/api/01_schedule.sql) makes one from a kind's or an agent's row.
CREATE TYPE tickq.schedule AS (
    every interval,
    every_offset interval,
    at_times time [],
    on_days smallint [],
    days smallint [],
    months smallint [],
    cron text,
    timezone text
);
COMMENT ON TYPE tickq.schedule IS
'A schedule as job_kind holds it: an every cadence with its offset; or at times with weekdays '
'(ISO, nth, last), days of the month and months; or a cron string; and the IANA zone of the '
'calendar ones. Made from a row by tickq.schedule_of.';
