"""reference/sql-api.md: the schema `tickq` for people who query the queue with psql, from the
`COMMENT ON` of every view, table, type and function of a migrated database (pg_description),
each function placed under the SQL file that defines it."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from common import REPO, code, header, table

SQL = REPO / "sql"
DEFINED = re.compile(r"(?:FUNCTION|PROCEDURE)\s+tickq\.([a-z0-9_]+)\s*\(", re.IGNORECASE)

RELATIONS = """
SELECT c.relname, c.relkind, coalesce(obj_description(c.oid, 'pg_class'), '') AS comment,
    array_agg(a.attname ORDER BY a.attnum) AS columns,
    array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY a.attnum) AS types,
    array_agg(coalesce(col_description(c.oid, a.attnum), '') ORDER BY a.attnum) AS notes
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = 'tickq' AND c.relkind IN ('r', 'v')
GROUP BY c.oid, c.relname, c.relkind
ORDER BY c.relname
"""

TYPES = """
SELECT t.typname, t.typtype, coalesce(obj_description(t.oid, 'pg_type'), '') AS comment,
    CASE t.typtype
        WHEN 'e' THEN (SELECT string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder)
                       FROM pg_enum AS e WHERE e.enumtypid = t.oid)
        WHEN 'd' THEN format_type(t.typbasetype, t.typtypmod)
        ELSE (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                                ORDER BY a.attnum)
              FROM pg_attribute AS a WHERE a.attrelid = t.typrelid AND a.attnum > 0)
    END AS shape
FROM pg_type AS t
JOIN pg_namespace AS n ON n.oid = t.typnamespace
WHERE n.nspname = 'tickq' AND t.typtype IN ('e', 'd')
   OR n.nspname = 'tickq' AND t.typtype = 'c'
      AND (SELECT c.relkind FROM pg_class AS c WHERE c.oid = t.typrelid) = 'c'
ORDER BY t.typname
"""

FUNCTIONS = """
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
    CASE p.prokind WHEN 'p' THEN 'procedure' ELSE pg_get_function_result(p.oid) END AS returns,
    coalesce(obj_description(p.oid, 'pg_proc'), '') AS comment
FROM pg_proc AS p
JOIN pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = 'tickq'
ORDER BY p.proname, args
"""


def defined_in() -> dict[str, str]:
    """{function name: the API file that defines it, else "migrations"}."""
    found: dict[str, str] = {}
    for path in sorted((SQL / "migrations").glob("*.sql")):
        for name in DEFINED.findall(path.read_text()):
            found[name] = "migrations"
    for path in sorted((SQL / "api").glob("*.sql")):
        for name in DEFINED.findall(path.read_text()):
            found[name] = f"sql/api/{path.name}"
    return found


def _relation(row: tuple) -> str:
    name, _kind, comment, columns, types, notes = row
    text = f"### `tickq.{name}`\n\n{comment}\n\n"
    return text + table(("column", "type", "note"),
                        [(code(c), t, n) for c, t, n in zip(columns, types, notes)])


def page(conn: Any) -> str:
    relations = conn.execute(RELATIONS).fetchall()
    who: dict[str, set[str]] = defaultdict(set)
    for role, _privilege, name in conn.execute(
            "SELECT * FROM tickq.access_privileges()").fetchall():
        who[name].add(role)
    files = defined_in()
    by_file: dict[str, list[tuple]] = defaultdict(list)
    for name, args, returns, comment in conn.execute(FUNCTIONS).fetchall():
        by_file[files.get(name, "migrations")].append((name, args, returns, comment))
    parts = [header("SQL API", "the COMMENT ON of every object of the schema tickq, read from a "
                    "migrated database"), INTRO]
    parts.append("## Views\n")
    parts += [_relation(r) for r in relations if r[1] == "v"]
    parts.append(TABLES)
    parts += [_relation(r) for r in relations if r[1] == "r"]
    parts.append("## Types\n")
    kinds = {"e": "enum", "d": "domain", "c": "composite"}
    parts.append(table(("type", "kind", "values or base", "what"),
                       [(code(f"tickq.{n}"), kinds[k], shape or "", comment)
                        for n, k, comment, shape in conn.execute(TYPES).fetchall()]))
    parts.append(FUNCTIONS_TEXT)
    for source in sorted(by_file, key=lambda f: (f == "migrations", f)):
        parts.append(f"### `{source}`\n")
        rows = [(code(f"tickq.{name}({args})"), returns, ", ".join(sorted(who.get(name, ()))),
                 comment) for name, args, returns, comment in by_file[source]]
        parts.append(table(("function", "returns", "granted to", "what"), rows))
    return "\n".join(parts)


INTRO = """
The tables are private; the functions and views are the API. Every object has a `COMMENT ON`,
which this page shows, and every function that reads the clock takes the time as its last
parameter (`p_now`, default `now()`). Open psql on the queue with `tickq psql`. With [a role per
job](../how-to/roles.md), the reader role may read the views, and the dispatcher call the
functions marked below.

## Queries to start from

```sql
-- the last ten runs that did not end ok
SELECT id, kind, run_trigger, attempt, outcome, exit_code, finished_at
FROM tickq.job_run WHERE outcome NOT IN ('ok', 'running') ORDER BY id DESC LIMIT 10;
-- what is due, running, paused or stale now
SELECT kind, state, next_due_at, last_outcome, failure_streak FROM tickq.queue_status;
-- what `tickq status --check` reports
SELECT * FROM tickq.health_problems();
-- who holds each pool
SELECT pool, slots, busy, free, holders FROM tickq.pool_occupancy;
```
"""

TABLES = """
## Tables

Read them freely; change them only through the functions (a sync writes the registry's
columns, and sets back anything else that changed them).
"""

FUNCTIONS_TEXT = """
## Functions

Grouped by the file that defines them (`sql/api/NN_concern.sql`, re-applied whole when their
checksum changes), the triggers' functions too (the triggers are in `sql/migrations/`).
"granted to" names the roles of [a role per job](../how-to/roles.md) that may call a function;
they run as the owner.
"""
