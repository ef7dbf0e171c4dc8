"""Write the generated reference pages into docs/reference/ (`make docs-reference`).

    python docs/gen/reference.py                      # on an embedded PostgreSQL it starts
    python docs/gen/reference.py --database-url URL   # on a server whose role may create databases

Each page comes from the source that owns its facts (see each ref_*.py); a test
(tests_py/test_docs_reference.py) runs `pages` and fails while a committed page differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REFERENCE, database, embedded_server  # noqa: E402


def pages(server_url: str, template: str | None = None) -> dict[str, str]:
    """{file name under docs/reference/: text} of every generated page. `template`: a migrated
    database of the server to copy (the tests'), instead of migrating each database anew."""
    import ref_commands
    import ref_environment
    import ref_exits
    import ref_log_events
    import ref_metrics
    import ref_queue
    import ref_registry
    import ref_sql_api

    from tickq import db

    ran = ref_queue.run(server_url, template)
    with database(server_url, template) as url, db.connect(url) as conn:
        found = {"registry.md": ref_registry.page(conn),
                 "metrics.md": ref_metrics.page(ran.metrics, conn),
                 "sql-api.md": ref_sql_api.page(conn)}
    found["environment.md"] = ref_environment.page(ran)
    found["commands.md"] = ref_commands.page()
    found["exit-statuses.md"] = ref_exits.page()
    found["log-events.md"] = ref_log_events.page()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a server whose role may create databases "
                        "(default: an embedded PostgreSQL started for the run)")
    args = parser.parse_args()
    if args.database_url:
        written = pages(args.database_url)
    else:
        with embedded_server() as url:
            written = pages(url)
    for name, text in written.items():
        path = REFERENCE / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(REFERENCE.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
