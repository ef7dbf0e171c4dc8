"""A primary that dies mid-run and a streaming standby that takes over, for real: Debian's
PostgreSQL 15 (scripts/pg15.sh installs it), a primary and a standby made by pg_basebackup, two
clusters of this test's own on 127.0.0.1. tickq reaches them through one libpq multi-host URL
(`target_session_attrs=read-write`), as it would through Patroni's or a managed service's
hosts.

With a synchronous standby (`synchronous_commit = on`, `synchronous_standby_names = '*'`) every
commit the dispatcher saw is on the standby too: the claim survives the failover, the command's
result reaches the new primary, the next tick runs there, and nothing runs twice at once.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from failover_pair import (
    Said,
    build_pair,
    cut_replication,
    folder,
    never_overlapping,
    replayed,
    runs_log,
    tick,
    tickq_cli,
    wait_for,
    write_registry,
)

__all__ = ["folder"]  # the fixture, used by name


def test_a_failover_to_a_synchronous_standby_mid_run_loses_nothing_and_runs_nothing_twice(
    folder: Path,
) -> None:
    pair = build_pair(folder, synchronous=True)
    registry = write_registry(folder)
    first = tick(registry, pair.url, folder / "run")
    wait_for("the command to start", lambda: (folder / "started").exists(), 60)

    pair.primary.stop("immediate")  # the primary dies while the command runs
    pair.standby.promote()
    (folder / "go").touch()
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 0, out

    with psycopg.connect(pair.standby.admin_url) as conn:
        runs = conn.execute("SELECT outcome::text, output_tail FROM tickq.job_run"
                            " WHERE kind = 'work' ORDER BY id").fetchall()
        assert runs == [("ok", "finished\n")], (runs, out)
        # The next tick runs on the new primary (the dead first host is skipped).
        conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'work'")
        conn.commit()
    second = tick(registry, pair.url, folder / "run")
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    with psycopg.connect(pair.standby.admin_url) as conn:
        outcomes = conn.execute("SELECT outcome::text FROM tickq.job_run WHERE kind = 'work'"
                                " ORDER BY id").fetchall()
    assert outcomes == [("ok",), ("ok",)], out
    lines = runs_log(folder)
    assert len(lines) == 4 and never_overlapping(lines), lines


def test_a_claim_an_asynchronous_failover_lost_neither_runs_twice_nor_drops_its_result(
    folder: Path,
) -> None:
    pair = build_pair(folder, synchronous=False)
    registry = write_registry(folder)
    nudge = folder / "nudge-go"
    with open(registry, "a") as r:  # a run that ends after the failover, so the tick refills
        r.write(f'\n[kinds.nudge]\ncommand = ["sh", "-c", "while [ ! -e {nudge} ]; do sleep'
                ' 0.05; done"]\nevery = "1h"\ntimeout = "2m"\n')
    synced = tickq_cli("sync", "--registry", str(registry), url=pair.url, run_dir=folder / "run")
    assert synced.returncode == 0, synced
    wait_for("the standby to replay the sync", lambda: replayed(pair), 30)
    cut_replication(pair)
    first = tick(registry, pair.url, folder / "run")
    said = Said(first)
    wait_for("the command to start", lambda: (folder / "started").exists(), 60)

    pair.primary.stop("immediate")  # the claims never reached the standby
    pair.standby.promote()
    nudge.touch()  # nudge ends: its report meets the new primary, which then claims `work`
    with psycopg.connect(pair.standby.admin_url, autocommit=True) as conn:
        try:
            wait_for("the new primary to hand out a claim of work", lambda: conn.execute(
                "SELECT count(*) FROM tickq.job_run WHERE kind = 'work'").fetchone()[0] == 1, 60)
        except AssertionError:
            first.kill()
            raise AssertionError(said.all(first)) from None
        # The tick's word that it handled that claim (a second copy would have been started
        # there, instead): only then may the first copy end.
        wait_for("the tick to meet the claim", lambda: "run.claimed_twice" in said.text(), 60)
        assert runs_log(folder) == [runs_log(folder)[0]], runs_log(folder)
        (folder / "go").touch()
        out = said.all(first)
        lines = runs_log(folder)
        assert len(lines) == 2 and never_overlapping(lines), (lines, out)
        # The one copy's real result is recorded on the run the new primary knows.
        runs = conn.execute("SELECT outcome::text, output_tail FROM tickq.job_run"
                            " WHERE kind = 'work'").fetchall()
        assert runs == [("ok", "finished\n")], (runs, out)
    assert "run.claimed_twice" in out, out
    # Results of runs the new primary never saw are kept aside and named, never dropped.
    rejected = list((folder / "run" / "spool" / "rejected").glob("*"))
    assert rejected, out
    check = tickq_cli("status", "--check", url=pair.url, run_dir=folder / "run")
    assert check.returncode != 0 and "rejected" in check.stdout + check.stderr, check


def test_a_report_an_asynchronous_failover_lost_is_loud_and_the_run_lost_after_its_lease(
    folder: Path,
) -> None:
    """The claim reached the standby, the report did not: the new primary holds the run as
    `running`. The dispatcher's host keeps the report and its next tick applies it
    (test_failover_kept.py); a tick elsewhere has nothing to apply, and tickq promises that the
    run is loud: once the lease ends, `status --check` names the run, and the next tick records
    it `lost` (a failure, retried if the kind has retries)."""
    pair = build_pair(folder, synchronous=False)
    registry = write_registry(folder)
    text = registry.read_text().replace('timeout = "2m"', 'timeout = "10s"')
    registry.write_text(text.replace("[settings]\n", '[settings]\nlease_margin = "1s"\n'
                                     'housekeeping_timeout = "3s"\n'))
    first = tick(registry, pair.url, folder / "run")
    wait_for("the command to start", lambda: (folder / "started").exists(), 60)
    wait_for("the standby to replay the claim", lambda: replayed(pair), 30)
    cut_replication(pair)
    (folder / "go").touch()
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 0 and "run.finished kind=work" in out, out

    pair.primary.stop("immediate")  # the report never reached the standby
    pair.standby.promote()
    with psycopg.connect(pair.standby.admin_url, autocommit=True) as conn:
        [(run_id, outcome, until)] = conn.execute(
            "SELECT r.id, r.outcome::text, k.leased_until FROM tickq.job_run AS r"
            " JOIN tickq.job_kind AS k ON k.run_id = r.id WHERE r.kind = 'work'").fetchall()
        assert outcome == "running"
        wait_for("the lease to end", lambda: conn.execute(
            "SELECT now() > %s", (until,)).fetchone()[0], 30)
    check = tickq_cli("status", "--check", url=pair.url, run_dir=folder / "run")
    assert check.returncode == 1 and f"run {run_id}" in check.stdout + check.stderr, check
    # A tick of another host: its ledger folder holds none of the first host's reports.
    after = tickq_cli("tick", "--registry", str(registry), url=pair.url,
                      run_dir=folder / "elsewhere")
    assert after.returncode == 0, after
    with psycopg.connect(pair.standby.admin_url) as conn:
        [(outcome,)] = conn.execute("SELECT outcome::text FROM tickq.job_run WHERE id = %s",
                                    (run_id,)).fetchall()
    assert outcome == "lost"
