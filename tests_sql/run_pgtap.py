#!/usr/bin/env python3
"""Run the pgTAP tests (tests_sql/*.sql) with pg_prove, optionally plpgsql_check too.

    python tests_sql/run_pgtap.py                       # embedded PostgreSQL 18 in a temp folder
    python tests_sql/run_pgtap.py --database-url URL --plpgsql-check

Steps: (re)create the database ``tickq_pgtap`` on the server, migrate it with tickq.db.migrate,
create the pgtap extension, run pg_prove over the test files, and with --plpgsql-check run
plpgsql_check_function_tb over every plpgsql function in schema tickq (trigger functions with
each relation they are attached to, and a statement trigger's transition tables). Any failure
or finding exits non-zero.

The embedded PostgreSQL 18 has no pgTAP of its own: the extension files are taken from an
installed PostgreSQL's share folder (Debian's postgresql-NN-pgtap, Homebrew's pgtap) through the
extension_control_path setting, which is new in PostgreSQL 18 and set only for the session that
runs CREATE EXTENSION. pg_prove's own sessions don't need it.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
try:
    from tickq import db
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO / "python_runner"))
    from tickq import db

# TICKQ_PGTAP_DB lets several runs share one server without colliding.
DBNAME = os.environ.get("TICKQ_PGTAP_DB", "tickq_pgtap")

# Folders that hold extension/pgtap.control, best first (the folder above extension/).
PGTAP_SHARE_CANDIDATES = [
    "/usr/share/postgresql/15",
    *sorted(glob.glob("/usr/share/postgresql/*"), reverse=True),
    *sorted(glob.glob("/opt/homebrew/share/postgresql*"), reverse=True),
    *sorted(glob.glob("/usr/local/share/postgresql*"), reverse=True),
    "/opt/homebrew/share",
    "/usr/local/share",
]

PLPGSQL_FUNCTIONS = """
SELECT p.oid::regprocedure::text AS signature, t.tgrelid::regclass::text AS relation,
    t.tgoldtable::text AS old_table, t.tgnewtable::text AS new_table
FROM pg_proc AS p
INNER JOIN pg_namespace AS n ON p.pronamespace = n.oid
INNER JOIN pg_language AS l ON p.prolang = l.oid
LEFT JOIN pg_trigger AS t ON t.tgfoid = p.oid AND NOT t.tgisinternal
WHERE n.nspname = 'tickq' AND l.lanname = 'plpgsql'
ORDER BY 1, 2
"""


def log(message: str) -> None:
    print(f"run_pgtap: {message}", flush=True)


def pgtap_share_dir(explicit: str | None) -> str | None:
    candidates = [explicit] if explicit else PGTAP_SHARE_CANDIDATES
    for folder in candidates:
        if folder and Path(folder, "extension", "pgtap.control").is_file():
            return folder
    return None


def recreate_database(server_url: str) -> str:
    db.drop_database(server_url, DBNAME)
    return db.create_database(server_url, DBNAME)


def create_pgtap(conn: psycopg.Connection, share: str | None) -> None:
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'pgtap'"
    ).fetchone()
    if not available:
        if conn.info.server_version < 180000:
            raise SystemExit(
                "run_pgtap: pgtap is not installed on this server "
                "(Debian: apt-get install postgresql-NN-pgtap)"
            )
        folder = pgtap_share_dir(share)
        if folder is None:
            raise SystemExit(
                "run_pgtap: no pgtap extension files found for the embedded server; install "
                "Debian's postgresql-15-pgtap (scripts/pg15.sh install) or Homebrew's pgtap, "
                "or pass --pgtap-share DIR (the folder above extension/pgtap.control)"
            )
        log(f"extension_control_path = $system:{folder}")
        conn.execute(
            "SELECT set_config('extension_control_path', %s, false)", (f"$system:{folder}",)
        )
    conn.execute("CREATE EXTENSION IF NOT EXISTS pgtap")


def run_pg_prove(url: str, files: list[Path], psql_bin: str | None) -> int:
    pg_prove = shutil.which("pg_prove")
    if pg_prove is None:
        log("pg_prove not found (Debian: libtap-parser-sourcehandler-pgtap-perl)")
        return 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(db.libpq_env(url))
    cmd = [pg_prove, "--nocolor", "--failures", "--comments"]
    if psql_bin:
        cmd += ["--psql-bin", psql_bin]
    cmd += [os.path.relpath(f.resolve(), REPO) for f in files]
    log(f"pg_prove over {len(files)} files on {env.get('PGHOST')} database {env.get('PGDATABASE')}")
    return subprocess.run(cmd, env=env, cwd=REPO, check=False).returncode


# The house rule gives every function the time as its last parameter (p_now DEFAULT now()), also
# functions that do not read the clock. That one finding is expected; every other one fails.
HOUSE_RULE_FINDING = 'unused parameter "p_now"'


def run_plpgsql_check(conn: psycopg.Connection) -> int:
    conn.execute("CREATE EXTENSION IF NOT EXISTS plpgsql_check")
    functions = conn.execute(PLPGSQL_FUNCTIONS).fetchall()
    findings = 0
    for signature, relation, old_table, new_table in functions:
        target = f"{signature} ON {relation}" if relation else signature
        try:
            rows = conn.execute(
                "SELECT level, lineno, sqlstate, message, detail, hint, query"
                " FROM plpgsql_check_function_tb(%s::regprocedure, coalesce(%s::regclass, 0),"
                " oldtable => %s, newtable => %s)",  # a statement trigger's transition tables
                (signature, relation, old_table, new_table),
            ).fetchall()
        except psycopg.Error as exc:
            rows = [("error", None, exc.sqlstate, str(exc).strip(), None, None, None)]
        for level, lineno, sqlstate, message, detail, hint, query in rows:
            if message == HOUSE_RULE_FINDING:
                continue
            findings += 1
            at = f" line {lineno}" if lineno is not None else ""
            print(f"plpgsql_check: {target}{at}: {level} {sqlstate}: {message}")
            for label, value in (("detail", detail), ("hint", hint), ("query", query)):
                if value:
                    print(f"    {label}: {value}")
    log(f"plpgsql_check: {len(functions)} function checks, {findings} findings")
    return 1 if findings else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        help="server to test on (a superuser); default: an embedded PostgreSQL in a temp folder",
    )
    parser.add_argument(
        "--plpgsql-check", action="store_true", help="also run plpgsql_check over schema tickq"
    )
    parser.add_argument(
        "--pgtap-share",
        default=os.environ.get("TICKQ_PGTAP_SHARE"),
        help="folder above extension/pgtap.control, for the embedded server (default: searched)",
    )
    parser.add_argument("files", nargs="*", type=Path, help="test files (default: tests_sql/*.sql)")
    args = parser.parse_args(argv)

    files = args.files or sorted(HERE.glob("*.sql"))
    if not files:
        log(f"no test files in {HERE}")
        return 1

    tmp: Path | None = None
    psql_bin: str | None = None
    server_url = args.database_url
    if not server_url:
        from tickq.db import embedded

        tmp = Path(tempfile.mkdtemp(prefix="tickq-pgtap-"))
        tmp.chmod(0o711)  # as root, the server's own user must pass this folder of ours
        server_url = embedded.ensure_server(tmp / "pg")
        psql_bin = str(embedded.bin_dir() / "psql")
        log(f"embedded PostgreSQL in {tmp}")
    try:
        url = recreate_database(server_url)
        with db.connect(url) as conn:
            log(f"server {conn.info.parameter_status('server_version')}, database {DBNAME}")
            for line in db.migrate(conn):
                log(f"applied {line}")
            create_pgtap(conn, args.pgtap_share)
            status = 0
            if args.plpgsql_check:
                status |= run_plpgsql_check(conn)
        status |= run_pg_prove(url, files, psql_bin)
        return 1 if status else 0
    except db.MigrationError as exc:
        log(f"migration failed: {exc}")
        return 1
    finally:
        if tmp is not None:
            from tickq.db import embedded

            embedded.stop_server(tmp / "pg")
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
