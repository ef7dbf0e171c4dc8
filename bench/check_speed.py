"""How long `tickq check` takes with its worst-case simulation, against a bare psycopg process on
the same server in the same run: `examples/starvation/real_fix.toml` (45 kinds; weekly kinds in
London, so a week holding a clock change), the demo's 3 kinds (what every check costs besides its
simulation), a day of 1,000 generated kinds, and `check --suggest` of the story's original
registry (45 kinds in 2 slots: no offsets help, so it searches the slots and the timeouts).

    .venv/bin/python bench/check_speed.py [--quick] [--reps N] [--database-url URL] [--against DIR]

Reference (A): `python -c "import psycopg; psycopg.connect(URL).execute('select 1')"`, the same
interpreter. Measured A B A B ... (--reps pairs, default 5; --quick 3 and 300 kinds), so load
from other work on the machine falls on both; the ratio is median(B) / median(A). Before the
pairs one untimed check builds the scratch template (tickq.db.scratch) if the server lacks it;
its time is printed as the first check's. The 1,000 kinds are timed whole (median of up to 3 runs).
Then where the time of one real_fix check goes, in this process: the scratch copies, the
registry loaded, the simulation (its runs and events), the drop; with one database (the windows
one after the other) and with as many as the machine has cores (beside each other), whose
results must be the same; then each window alone in a database of its own, and their sum shared
perfectly over the cores: the least the simulation itself can take on this machine.

With --against DIR (another checkout, e.g. a `git archive` of an older commit), that checkout's
`tickq check` is timed too, in the same pairs (A B C A B C ...), on a database of its own on the
same server, migrated by its own tickq, as a role of its own (`tickq_bench_against`, dropped
afterwards with the templates it made): its scratch template is its own even where the schemas
differ (under one role each check would drop the other's and build its own again).

No folder is left in the temp directory and no bytecode is written into the checkout: every
process writes and reads its bytecode in the run's temporary folder (PYTHONPYCACHEPREFIX), as an
installed package has its own.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before anything of the checkout is imported

import contextlib  # noqa: E402
import hashlib  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import _common as c  # noqa: E402
import psycopg  # noqa: E402
from psycopg import conninfo, sql  # noqa: E402

from tickq import db  # noqa: E402
from tickq.check import simulate  # noqa: E402
from tickq.db.api import check as api  # noqa: E402
from tickq.registry import load_registry  # noqa: E402

TICKQ = [sys.executable, "-m", "tickq.cli"]
REAL_FIX = c.REPO / "examples" / "starvation" / "real_fix.toml"
DEMO = c.REPO / "examples" / "demo" / "registry.toml"
ORIGINAL = c.REPO / "examples" / "starvation" / "original.toml"
REFERENCE = "import psycopg, sys; psycopg.connect(sys.argv[1]).execute('select 1')"


def many_kinds(folder: Path, count: int) -> Path:
    """`count` kinds that fit 40 slots, spread with offsets: a tenth every 15 minutes, three
    tenths hourly, three tenths every 6 hours and three tenths daily at a time of day (UTC)."""
    lines = ['[settings]\nslots = 40\ntick = "5m"\nstale_after = "15m"\n']
    for i in range(count):
        share = i % 10
        if share == 0:
            schedule, timeout = f'every = "15m"\noffset = "{(i // 10) % 3 * 5}m"', "1m"
        elif share <= 3:
            schedule, timeout = f'every = "1h"\noffset = "{(i * 7) % 12 * 5}m"', "2m"
        elif share <= 6:
            schedule, timeout = f'every = "6h"\noffset = "{(i * 11) % 72 * 5}m"', "5m"
        else:
            minute = (i * 13) % (24 * 12) * 5
            schedule, timeout = f'at = "{minute // 60:02d}:{minute % 60:02d}"', "5m"
        priority = ("urgent", "high", "normal", "low")[i % 4]
        lines.append(f'[kinds.k{i:04d}]\ncommand = ["true"]\n{schedule}\ntimeout = "{timeout}"\n'
                     f'priority = "{priority}"\n')
    path = folder / f"kinds_{count}.toml"
    path.write_text("\n".join(lines))
    return path


def environment(folder: Path, server: str) -> dict[str, str]:
    """What the processes get: the checkout's package, a shape cache in `folder`, and bytecode
    in `folder` too (as bench/idle_tick.py: an installed package has its own, so compiling
    tickq's modules on every run, about 28 ms of a check here, would be measured otherwise;
    none lands in the checkout), and the bench's server for the scratch databases (as on the
    embedded default, where the queue and the scratch databases share the server). The
    reference and the other checkout get the same."""
    return {"PYTHONPATH": str(c.REPO / "python_runner"), "PATH": os.environ.get("PATH", ""),
            "TICKQ_SCRATCH_URL": server,
            "PYTHONPYCACHEPREFIX": str(folder / "pycache"),
            "TICKQ_CACHE_DIR": str(folder / "cache"), "TICKQ_RUN_DIR": str(folder / "run"),
            "HOME": str(folder)}


def reference(url: str, env: dict[str, str]) -> float:
    """Seconds of a bare psycopg process that connects and asks `select 1`: the ratios' unit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", REFERENCE, url], env=env, check=True)
    return time.perf_counter() - started


def whole_check(registry: Path, url: str, env: dict[str, str], *more: str) -> tuple[float, str]:
    """Seconds of one `tickq check` process (the checkout `env` names) and its verdict, with a
    digest of all it printed (the same registry checked by another checkout: the same digest)."""
    started = time.perf_counter()
    done = subprocess.run([*TICKQ, "check", *more, "--registry", str(registry), "--database-url",
                           url], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"tickq check exited {done.returncode}: {done.stderr[-2000:]}")
    verdict = next((line for line in done.stdout.splitlines()
                    if line.startswith(("worst case fits", "worst case STARVES"))), "?")
    digest = hashlib.sha256(done.stdout.encode()).hexdigest()[:12]
    return wall, f"{verdict.split(':')[0]} (output {digest})"


def in_turn(
    registry: Path, times: int, url: str, env: dict[str, str],
    other: tuple[str, dict[str, str]] | None, *more: str,
) -> tuple[list[float], list[float], str]:
    """`times` checks of `registry` (with `more` options) by this checkout and, given `other`,
    as many by that one, each after one of this checkout's: their seconds and the last verdict."""
    own, others, verdict = [], [], "?"
    for _ in range(times):
        wall, verdict = whole_check(registry, url, env, *more)
        own.append(wall)
        if other:
            others.append(whole_check(registry, *other, *more)[0])
    return own, others, verdict


def against_text(against: Path | None, others: list[float]) -> str:
    """How the other checkout did, for the end of a line ('' without one)."""
    if not others:
        return ""
    return f"; {against}: {statistics.median(others):.2f} s (runs: {runs_of(others)})"


def parts_of_one_check(registry: Path, server: str) -> str:
    """Where a check's simulation spends its time, in this process: one database, the windows
    one after the other, then the scratch databases of a check (as many as cores), beside each
    other; the same result both ways (a digest of every kind's runs, longest wait, starved, ...)."""
    loaded = load_registry(registry)
    lines, digests = [], []
    for jobs in (1, os.cpu_count() or 1):
        started = time.perf_counter()
        marks = []
        with simulate.scratch(server, jobs) as sims:
            sims.conn  # noqa: B018 (made)
            marks.append(("scratch taken (a pool database put back)", time.perf_counter()))
            result = simulate.evaluate(sims, loaded, None, jobs=jobs)
            marks.append(("registry loaded, windows planned, clock moved", time.perf_counter()))
        marks.append(("scratch let go of", time.perf_counter()))
        lines.append(f"  {jobs} database(s) at once:")
        last = started
        for name, at in marks:
            lines.append(f"    {name:46} {(at - last) * 1000:8.0f} ms")
            last = at
        digests.append(hashlib.sha256(repr(result).encode()).hexdigest()[:12])
    runs = sum(k.runs for k in result.kinds)
    hours = ", ".join(f"{float(w.hours):g} h" for w in result.windows)
    lines.append(f"  {runs} runs simulated over {hours}; digests {', '.join(digests)}"
                 + (" (the same)" if len(set(digests)) == 1 else " DIFFER"))
    alone = []
    for number in range(len(result.windows)):  # each window alone, in a database of its own
        with simulate.scratch(server, 1) as sims:
            api.load(sims.conn, loaded)
            window = api.windows(sims.conn)[number]
            if number:
                api.arm_as_first(sims.conn, result.windows[0], None)
            started = time.perf_counter()
            api.simulate_window(sims.conn, window, None, steady=True)
            alone.append(time.perf_counter() - started)
    cores = os.cpu_count() or 1
    lines.append("  each window alone: " + ", ".join(f"{a * 1000:.0f} ms" for a in alone)
                 + f"; their sum shared perfectly over {cores} core(s): "
                 f"{sum(alone) / cores * 1000:.0f} ms, the longest {max(alone) * 1000:.0f} ms")
    return "\n".join(lines)


AGAINST_ROLE = "tickq_bench_against"


def other_checkout(
    against: Path | None, server: str, env: dict[str, str], stack: contextlib.ExitStack
) -> tuple[str, dict[str, str]] | None:
    """The database and environment of the checkout `against`, migrated by its own tickq, as a
    role of its own (AGAINST_ROLE, taken with `-c role=`): a check drops its role's scratch
    templates of other schemas, so two checkouts of different schemas under one role would
    rebuild the template at every check, each dropping the other's."""
    if against is None:
        return None
    own_role = stack.enter_context(against_role(server))
    url = stack.enter_context(c.fresh_database(server, "check_against", migrated=False))
    if own_role:
        url = conninfo.make_conninfo(url, options=f"-c role={AGAINST_ROLE}")
    other_env = {**env, "PYTHONPATH": str(against.resolve() / "python_runner")}
    subprocess.run([*TICKQ, "migrate", "--database-url", url], env=other_env, check=True,
                   capture_output=True)
    return url, other_env


@contextlib.contextmanager
def against_role(server: str) -> Iterator[bool]:
    """AGAINST_ROLE on the server while the block runs (a superuser, no login: the bench's own
    role takes it), then the templates it made and the role dropped. False, and said, where the
    bench's role may not make it (a --database-url role that may only create databases): then
    both checkouts share a role, and schemas that differ rebuild their templates."""
    with db.connect(server) as admin:
        try:
            admin.execute(f"DROP ROLE IF EXISTS {AGAINST_ROLE}")
            admin.execute(f"CREATE ROLE {AGAINST_ROLE} SUPERUSER NOLOGIN")
        except psycopg.Error as exc:
            print(f"--against under the bench's own role ({exc.diag.message_primary}): where the "
                  "schemas differ, each check builds its scratch template again")
            yield False
            return
        try:
            yield True
        finally:
            for (name,) in admin.execute(
                    "SELECT datname FROM pg_database WHERE datdba = (SELECT oid FROM pg_roles"
                    " WHERE rolname = %s)", (AGAINST_ROLE,)).fetchall():
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                              .format(sql.Identifier(name)))
            admin.execute(f"DROP ROLE IF EXISTS {AGAINST_ROLE}")


def runs_of(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, help="A B pairs (default 5; --quick 3)")
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="also time this checkout's tickq check (its python_runner and sql)")
    args = p.parse_args()
    reps = args.reps or (3 if args.quick else 5)
    count = 300 if args.quick else 1000
    with (tempfile.TemporaryDirectory(prefix="tickq-bench-check-") as tmp,
          c.server(args.database_url) as server, c.fresh_database(server, "check") as url,
          contextlib.ExitStack() as stack):
        folder = Path(tmp)
        env = environment(folder, server)
        kinds = many_kinds(folder, count)
        other = other_checkout(args.against, server, env, stack)
        with db.connect(url) as conn:
            print(c.server_info(conn))
        reference(url, env)  # its bytecode too, before the pairs
        first, _ = whole_check(REAL_FIX, url, env)
        print(f"first check of real_fix.toml (builds the scratch template if missing): "
              f"{first:.2f} s\n")
        if other:
            whole_check(REAL_FIX, *other)  # its own template
        refs, checks, others, other_verdict = [], [], [], "?"
        for _ in range(reps):
            refs.append(reference(url, env))
            wall, verdict = whole_check(REAL_FIX, url, env)
            checks.append(wall)
            if other:
                wall, other_verdict = whole_check(REAL_FIX, *other)
                others.append(wall)
        ref, check = statistics.median(refs), statistics.median(checks)
        print(f"A reference, bare psycopg connect + select 1: {ref * 1000:.0f} ms "
              f"(runs: {', '.join(f'{r * 1000:.0f}' for r in refs)})")
        print(f"B tickq check real_fix.toml, a week: {check:.2f} s (runs: {runs_of(checks)}), "
              f"{verdict}")
        print(f"  B / A = {check / ref:.1f} (target at most 5): "
              + ("met" if check / ref <= 5 else "NOT MET"))
        if other:
            print(f"C the same check of {args.against}: {statistics.median(others):.2f} s "
                  f"(runs: {runs_of(others)}), {other_verdict}, C / A = "
                  f"{statistics.median(others) / ref:.1f}, B / C = "
                  f"{check / statistics.median(others):.2f}")
        smalls, other_smalls, _ = in_turn(DEMO, reps, url, env, other)
        small = statistics.median(smalls)
        print(f"tickq check of the demo's 3 kinds: {small:.2f} s (runs: {runs_of(smalls)}), "
              f"{small / ref:.1f}x A" + against_text(args.against, other_smalls))
        long_runs = 1 if args.quick else min(reps, 3)
        walls, other_walls, verdict = in_turn(kinds, long_runs, url, env, other)
        day = statistics.median(walls)
        print(f"tickq check of {count} kinds, a day: {day:.2f} s (runs: {runs_of(walls)}), "
              f"{verdict}, {day / ref:.0f}x A (target under 10 s): "
              + ("met" if day < 10 else "NOT MET"))
        if other:
            print(f"  the same of {args.against}: {statistics.median(other_walls):.2f} s "
                  f"(runs: {runs_of(other_walls)})")
        suggests, other_suggests, _ = in_turn(ORIGINAL, long_runs, url, env, other, "--suggest")
        print(f"tickq check --suggest of original.toml: {statistics.median(suggests):.2f} s "
              f"(runs: {runs_of(suggests)})" + against_text(args.against, other_suggests))
        print("\none real_fix.toml simulation, in this process:")
        print(parts_of_one_check(REAL_FIX, server))


if __name__ == "__main__":
    main()
