#!/usr/bin/env python3
"""CPU instructions per claim and per claim-and-report cycle, counted by valgrind (cachegrind).

    .venv/bin/python bench/claim_instructions.py [--slots N] [--sql-dir DIR]

Wall-clock figures on a shared 2-core VM move by 10-20% from run to run, which hides a change
worth 5%. Instruction counts do not move: this script loads a database once, copies its data
folder, and runs each workload from that same copy in a single-user PostgreSQL backend under
``valgrind --tool=cachegrind`` (no other process, no network, a fixed clock), twice: with 100
operations and with 300. Instructions per operation = (I(300) - I(100)) / 200, so start-up and
shutdown cancel out. Two runs of the same sql/ agree to within 0.1%.

Table: 10,000 kinds due an hour and more before the fixed clock (2026-11-29 12:00 UTC), every
1 second, 100,000 finished runs of history, --slots slot rows (default 100). Workloads:

- bare: ``SELECT name FROM tickq.job_kind WHERE enabled AND (NOT irreversible OR armed_at IS
  NOT NULL) AND run_id IS NULL AND due_at <= T
  ORDER BY priority, due_at LIMIT 3 FOR UPDATE SKIP LOCKED`` in a transaction rolled back (the
  reference: finds work, leases nothing);
- claim3: ``claim_jobs(3, 'x', T)`` in a transaction rolled back (what claim_latency.py times);
- cycle: ``report_run(run, 'x', 'ok', ...)`` of ``claim_jobs(1, 'x', T)``, one statement,
  committed (synchronous_commit off; the counts leave out waiting for the disk anyway).

Needs valgrind on PATH. --sql-dir migrates from another sql/ folder (e.g. an older commit's,
checked out with ``git worktree``), to compare two versions on the same data. --weighted puts
weights and pools on the data (bench/_queues.py weigh_kinds: the two kinds due first among them),
so every claim takes tickq.claim_fit's path; --weighted-behind puts them there too but makes every
weighted or pooled kind due an hour later, so the claims' candidates are all light (the claim of a
queue with weights whose due kinds have none: the probe, then the plain path). --profile WORKLOAD
also runs that workload under callgrind and writes callgrind.WORKLOAD.out to the current folder,
for ``callgrind_annotate --inclusive=yes`` (where the instructions go).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path

import _common as c
import _queues as q
import psycopg

KINDS = 10_000
HISTORY = 100_000
CLOCK = "2026-11-29 12:00Z"
DUE = f"timestamptz '{CLOCK}' - interval '1 hour' - make_interval(secs => i)"
BARE = (
    "SELECT count(*) FROM (SELECT name FROM tickq.job_kind WHERE enabled"
    " AND (NOT irreversible OR armed_at IS NOT NULL) AND run_id IS NULL"
    f" AND due_at <= '{CLOCK}' ORDER BY priority, due_at LIMIT 3 FOR UPDATE SKIP LOCKED) AS b"
)
WORKLOADS = {
    "bare": ["BEGIN", BARE, "ROLLBACK"],
    "claim3": ["BEGIN", f"SELECT count(*) FROM tickq.claim_jobs(3, 'x', '{CLOCK}')", "ROLLBACK"],
    "cycle": [
        "SELECT tickq.report_run(c.run_id, 'x', 'ok', 0, 'out', NULL, timestamptz '"
        + CLOCK
        + f"' + interval '1 second') FROM tickq.claim_jobs(1, 'x', '{CLOCK}') AS c"
    ],
}


def load(url: str, slots: int, weighted: bool = False, behind: bool = False) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        q.load_kinds(conn, KINDS, DUE, every="1 second", slots=slots)
        q.load_history(conn, KINDS, HISTORY, clock=f"timestamptz '{CLOCK}'")
        if weighted or behind:
            q.weigh_kinds(conn, True)
        if behind:
            conn.execute("UPDATE tickq.job_kind SET due_at = due_at + interval '1 hour'"
                         " WHERE weight > 1 OR pools <> '{}'")
            q.vacuum_analyze(conn)
        conn.execute("CHECKPOINT")


def copy_tree(source: Path, target: Path) -> None:
    """A data folder copied with owners and modes kept (the server may run as another user)."""
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def instructions(
    pgdata: Path,
    user: str | None,
    dbname: str,
    statements: list[str],
    callgrind_out: Path | None = None,
) -> int:
    script = pgdata.parent / "workload.sql"
    script.write_text("SET synchronous_commit = off\n" + "\n".join(statements) + "\n")
    script.chmod(0o644)
    tool = ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    if callgrind_out is not None:
        tool = ["--tool=callgrind", f"--callgrind-out-file={callgrind_out}"]
    cmd = [
        "valgrind", *tool, str(c.bin_dir() / "postgres"), "--single", "-D", str(pgdata), dbname,
    ]  # fmt: skip
    with script.open() as stdin:
        done = subprocess.run(
            cmd, stdin=stdin, capture_output=True, text=True, user=user, check=False
        )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    if "ERROR:" in done.stderr:
        raise SystemExit(f"a statement failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    p = c.parser(__doc__.split("\n\n")[0])
    p.add_argument("--slots", type=int, default=100, help="slot rows (default 100)")
    p.add_argument("--sql-dir", type=Path, help="migrate from this sql/ folder instead")
    p.add_argument("--weighted", action="store_true",
                   help="weights and pools present (bench/_queues.py weigh_kinds): the claims"
                   " take tickq.claim_fit's path")
    p.add_argument("--weighted-behind", action="store_true",
                   help="weights and pools present, none on a kind due before the others: the"
                   " claims' candidates are light")
    p.add_argument(
        "--profile",
        choices=sorted(WORKLOADS),
        help="also write callgrind.<workload>"
        ".out here (300 operations; read it with callgrind_annotate --inclusive=yes)",
    )
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found (Debian: apt-get install valgrind)")
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="tickq-instr-"))
    os.chmod(folder, 0o755)  # the server's own user reads the workload file here
    srv = c._embedded().get_server(folder / "pg", cleanup_mode="delete")
    try:
        server_url = srv.get_uri()
        url = c.db.create_database(server_url, "bench_instr")
        with c.db.connect(url) as conn:
            c.db.migrate(conn, args.sql_dir)
            print(f"claim_instructions: {date.today()}, {c.server_info(conn)}")
            if args.sql_dir:  # server_info names this checkout's sql/; the schema is from here
                print(f"migrated from {args.sql_dir}")
        load(url, args.slots, args.weighted, args.weighted_behind)
        pgdata, user = Path(srv.pgdata), srv.system_user
        ctl = [str(c.bin_dir() / "pg_ctl"), "-D", str(pgdata), "stop", "-w", "-m", "fast"]
        subprocess.run(ctl, user=user, check=True, capture_output=True)
        snapshot = folder / "snapshot"
        copy_tree(pgdata, snapshot)
        print(f"{KINDS:,} kinds, {HISTORY:,} runs, {args.slots} slots, clock {CLOCK}"
              + (", weights and pools present" if args.weighted else "")
              + (", weights and pools on kinds due later" if args.weighted_behind else "") + "\n")
        per_op: dict[str, float] = {}
        for name, statements in WORKLOADS.items():
            counts = {}
            for n in (100, 300):
                shutil.rmtree(pgdata)
                copy_tree(snapshot, pgdata)
                counts[n] = instructions(pgdata, user, "bench_instr", statements * n)
            per_op[name] = (counts[300] - counts[100]) / 200
        if args.profile:
            out = folder / "callgrind.out"
            out.touch(mode=0o666)  # the server's user writes it
            out.chmod(0o666)
            shutil.rmtree(pgdata)
            copy_tree(snapshot, pgdata)
            instructions(pgdata, user, "bench_instr", WORKLOADS[args.profile] * 300, out)
            shutil.copy(out, f"callgrind.{args.profile}.out")
            print(f"wrote callgrind.{args.profile}.out")
        rows = [
            [name, f"{value:,.0f}", f"{value / per_op['bare']:.1f}x"]
            for name, value in per_op.items()
        ]
        print(c.table(["workload", "instructions per operation", "/ bare"], rows))
        print(f"total run time {time.perf_counter() - started:.0f} s")
    finally:
        srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
