-- Every slot of the enabled calendar kinds in [start, until), walked with tickq.next_slot.
WITH RECURSIVE walk (name, slot) AS (
    SELECT
        k.name,
        tickq.next_slot(NULL, NULL, k.at_times, k.on_days, k.timezone,
            %(start)s::timestamptz - interval '1 microsecond')
    FROM tickq.job_kind AS k
    WHERE k.enabled AND k.at_times IS NOT NULL
    UNION ALL
    SELECT w.name, tickq.next_slot(NULL, NULL, k.at_times, k.on_days, k.timezone, w.slot)
    FROM walk AS w
    INNER JOIN tickq.job_kind AS k ON w.name = k.name
    WHERE w.slot < %(until)s::timestamptz
)
SELECT name, slot FROM walk
WHERE slot < %(until)s::timestamptz
