-- Time zone values of the registry that PostgreSQL knows but a user rarely means (legacy
-- names), and the nearest name for one it does not know (a typo): the words of
-- tickq.parse_settings' and tickq.parse_zone's refusals.

-- The zone database keeps a few legacy names that pass tickq.is_timezone but rarely mean what
-- the user means: EST, MST and HST are fixed offsets with no daylight saving (a New York job on
-- EST runs an hour off all summer), and EST5EDT, CST6CDT, MST7MDT and PST8PDT follow today's US
-- rules without the places' history. A registry value that names one is refused with the IANA
-- name to use; the Etc/GMT+5 style stays for a fixed offset on purpose.
CREATE OR REPLACE FUNCTION tickq.legacy_zone_problem(
    p_zone text
) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$
    SELECT format('%s is a legacy name: %s; use %s', l.zone, l.what, l.use)
    FROM (VALUES
        ('EST', 'a fixed UTC-5 with no daylight saving',
            'America/New_York for Eastern time (or Etc/GMT+5 for UTC-5 all year)'),
        ('MST', 'a fixed UTC-7 with no daylight saving',
            'America/Denver for Mountain time, America/Phoenix for Arizona (or Etc/GMT+7)'),
        ('HST', 'a fixed UTC-10', 'Pacific/Honolulu (or Etc/GMT+10)'),
        ('EST5EDT', 'US Eastern rules without the history of any place', 'America/New_York'),
        ('CST6CDT', 'US Central rules without the history of any place', 'America/Chicago'),
        ('MST7MDT', 'US Mountain rules without the history of any place', 'America/Denver'),
        ('PST8PDT', 'US Pacific rules without the history of any place', 'America/Los_Angeles')
    ) AS l (zone, what, use)
    WHERE l.zone = p_zone
$$;
COMMENT ON FUNCTION tickq.legacy_zone_problem(text) IS
'The registry''s message for a legacy zone name that is a zone but not what a user means (EST, '
'MST, HST, EST5EDT, CST6CDT, MST7MDT, PST8PDT): what it is and the IANA name to use; NULL for any '
'other name.';

-- A zone name with a typo ("Europe/Berln", or the place alone: "Berlin") is answered with the
-- nearest name the zone database has: the most letter pairs in common with the whole name or its
-- place (Dice), at least 0.6 of them. Offsets ("UTC+3") are not typos and get the rule instead.
-- Read only when a value is refused.
CREATE OR REPLACE FUNCTION tickq.unknown_zone(
    p_value jsonb
) RETURNS text
LANGUAGE sql STABLE
AS $$
    WITH wanted AS (
        SELECT lower(p_value #>> '{}') AS zone
        WHERE jsonb_typeof(p_value) = 'string' AND (p_value #>> '{}') !~ '[+-][0-9]'
            AND length(p_value #>> '{}') BETWEEN 3 AND 80
    ), pairs AS (
        SELECT DISTINCT substr(w.zone, i.n, 2) AS pair
        FROM wanted AS w CROSS JOIN generate_series(1, length(w.zone) - 1) AS i (n)
    ), scored AS (
        SELECT z.name, max(2.0 * c.common / (c.total + (SELECT count(*) FROM pairs))) AS score
        FROM pg_timezone_names AS z
        -- the whole name, and its place: the part after the last /
        CROSS JOIN LATERAL (VALUES (lower(z.name)), (lower(substring(z.name FROM '[^/]+$')))) AS t (text)
        CROSS JOIN LATERAL (
            SELECT count(*) AS total, count(*) FILTER (WHERE g.pair IN (SELECT p.pair FROM pairs AS p)) AS common
            FROM (SELECT DISTINCT substr(t.text, i.n, 2) AS pair
                FROM generate_series(1, length(t.text) - 1) AS i (n)) AS g
        ) AS c
        WHERE EXISTS (SELECT FROM wanted) AND z.name !~ '^(posix|right)/'
            AND tickq.legacy_zone_problem(z.name) IS NULL
        GROUP BY z.name
    )
    SELECT format('unknown time zone %s', left(p_value::text, 200)) || coalesce(
        -- only a name tickq takes, and never the value itself (the system's zone files may hold
        -- names such as "localtime" that PostgreSQL lists but tickq refuses)
        (SELECT format('; did you mean "%s"?', s.name) FROM scored AS s
            WHERE s.score >= 0.6 AND lower(s.name) <> lower(p_value #>> '{}') AND tickq.is_timezone(s.name)
            ORDER BY s.score DESC, s.name LIMIT 1),
        ' (use an IANA name spelled as in the zone database, such as Europe/London)')
$$;
COMMENT ON FUNCTION tickq.unknown_zone(jsonb) IS
'The registry''s message for a zone value PostgreSQL does not know: the nearest zone name when '
'one is close (a typo), else how a zone is spelled.';
