"""A kind whose weight alone makes it starve: `tickq check` fails naming the kind and its
weight, and `--suggest` proposes a lower weight that the same worst-case simulation passes.

Two light kinds always due (a second after each run ends) share three slots with a kind of
weight 3 and no pool, so it fits only when both light kinds are between runs at once. Capacity
is held for it from half of stale_after on (tickq.hold_from), but the light kind of 11 minutes
that started just before that still runs, so the heavy kind waits past stale_after. At weight 2
it needs only the slot the light kind of 4 minutes frees, and the light kinds never wait long.
Its runs of 2 minutes go on past the simulator's parts of 15 minutes, so each part picks up a run
that holds several slot rows (tests_sql/63-simulate-weights.sql has the same in one function).
"""

from __future__ import annotations

from pathlib import Path

from processes import tickq

REGISTRY = """
[settings]
slots = 3
tick = "1m"
stale_after = "10m"
capacity_margin = 0
housekeeping_every = "1d"

[kinds.heavy]
command = ["true"]
every = "30m"
timeout = "2m"
weight = {weight}

[kinds.light0]
command = ["true"]
every = "1s"
timeout = "11m"

[kinds.light1]
command = ["true"]
every = "1s"
timeout = "4m"
"""


def check(path: Path, db_url: str, *more: str) -> tuple[int, str]:
    done = tickq("check", *more, "--registry", str(path), "--database-url", db_url, timeout=300)
    # No error, no traceback: a verdict. (The light kinds' 1s cadence between 1m ticks is
    # warned about, as it should be: the simulation runs their slots at the ticks.)
    problems = [line for line in done.stderr.splitlines()
                if line and "its slots fall between ticks" not in line]
    assert not problems, done.stderr
    return done.returncode, done.stdout


def starved(output: str) -> list[str]:
    """The lines of the kinds the worst case starved (each: KIND (LANE) waits ..., longer...)."""
    return [line.strip() for line in output.splitlines() if ") waits " in line]


def test_check_fails_a_weight_too_large_naming_it_and_suggests_a_lower_one(
    tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / "weight.toml"
    path.write_text(REGISTRY.format(weight=3))
    code, output = check(path, db_url)
    assert code == 1, output
    assert "worst case STARVES 1 kind(s)" in output, output
    [line] = starved(output)
    assert line.startswith("heavy (normal) waits "), line
    # the weight is what it needed (no pool: it names none)
    assert line.endswith("; needs weight 3: 3 of the 3 slots free at once"), line
    assert "pool" not in line, line

    code, output = check(path, db_url, "--suggest")
    assert code == 1, output  # a suggestion does not make the check pass
    assert [s.split(":")[0] for s in starved(output)] == [line.split(":")[0]], output
    assert ("a lower weight; in each kind's table, set:\n\n"
            "[kinds.heavy]\nweight = 2") in output, output

    path.write_text(REGISTRY.format(weight=2))  # the suggestion, checked by the same check
    code, output = check(path, db_url)
    assert code == 0, output
    assert "worst case fits: no kind waits longer than stale_after 10m" in output, output
    assert not starved(output) and "STARVED" not in output, output
