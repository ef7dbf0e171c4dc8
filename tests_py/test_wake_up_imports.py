"""What a wake-up imports: the modules each command loads (-X importtime), the option groups
its parser holds, and what a tick leaves the cyclic collector."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from wake_up_costs import env, registry, tick

# Modules only other commands need: the page and its templates, agents, legacy, timers, check.
NOT_FOR_A_TICK = ("jinja2", "tickq.page", "tickq.agents", "tickq.legacy",
                  "tickq.timers", "tickq.check", "tickq.cli.status", "tickq.cli.check",
                  "tickq.cli.agents", "tickq.cli.legacy", "tickq.cli.timers", "tickq.cli.page",
                  "httpx")


def imported(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The command run with -X importtime, and every module it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "tickq.cli", *args],
                          env=env(), capture_output=True, text=True, timeout=60)
    modules = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}
    return done, modules


def test_version_imports_neither_the_database_nor_other_commands() -> None:
    done, modules = imported("--version")
    assert done.returncode == 0 and done.stdout.startswith("tickq ")
    assert not {m for m in modules if m.startswith(("psycopg", *NOT_FOR_A_TICK))}
    assert "tickq.cli.options" not in modules  # no command's parser is built


def test_a_tick_imports_only_what_a_tick_uses(db_url: str, tmp_path: Path) -> None:
    done, modules = imported("tick", "--registry", str(registry(tmp_path)),
                             "--database-url", db_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tickq.dispatch.tick" in modules
    assert sorted(m for m in modules if m.startswith(NOT_FOR_A_TICK)) == []


def test_a_tick_of_a_registry_that_passed_before_loads_no_toml_parser_or_checker(
    db_url: str, tmp_path: Path
) -> None:
    path = registry(tmp_path)
    tick(path, db_url)
    done, modules = imported("tick", "--registry", str(path), "--database-url", db_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(m for m in modules if m.startswith(("tomllib", "jsonschema"))) == []


def test_a_command_loads_the_options_of_its_group_only() -> None:
    """The groups' modules are imported by name (-X importtime does not see those imports)."""
    code = ("import sys; from tickq.cli import main; main.build_parser(sys.argv[1:]); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('tickq.cli.options'))))")
    loaded = {words[0]: subprocess.run([sys.executable, "-c", code, *words], env=env(), text=True,
                                       capture_output=True, check=True, timeout=60).stdout.split()
              for words in (["tick"], ["agent", "add", "x"], ["--help"])}
    assert loaded["tick"] == ["tickq.cli.options", "tickq.cli.options.queue"]
    assert loaded["agent"] == ["tickq.cli.options", "tickq.cli.options.agent",
                               "tickq.cli.options.values"]
    assert len(loaded["--help"]) == 10, loaded["--help"]  # the package, 8 groups, the values


def test_the_parser_of_one_command_holds_that_command_s_group_only() -> None:
    from tickq.cli import main, options

    parser = main.build_parser(["tick", "--registry", "x.toml"])
    queue = {name for name, group in options.GROUPS.items() if group == "queue"}
    assert "tick" in queue and "check" not in queue
    assert set(main.subcommands(parser)) == queue
    assert {"tick", "check", "agent", "legacy", "systemd"} <= set(
        main.subcommands(main.build_parser(["--help"])))
    # An unknown word gets the whole parser: argparse names the commands it knows.
    assert len(main.subcommands(main.build_parser(["tik"]))) > 10


# What a tick leaves the cyclic collector: its passes while nothing is frozen yet (the start-up:
# psycopg and the command's imports, none of it garbage) and once the start-up is frozen (what
# the command makes).
COLLECTOR = """
import gc, json, sys
passes = []
gc.callbacks.append(lambda phase, info: passes.append(gc.get_freeze_count() > 0)
                    if phase == "start" else None)
from tickq.cli.main import main
status = main(sys.argv[1:])
print(json.dumps({"status": status, "starting": passes.count(False),
                  "running": passes.count(True), "frozen": gc.get_freeze_count()}))
"""


def test_a_tick_starts_without_collecting_and_collects_what_it_makes(
    db_url: str, tmp_path: Path
) -> None:
    """Before, the collector passed 70-odd times over a tick's start-up objects (about 12 ms of
    an idle tick, bench/README.md); now they are frozen once the command is imported, and the
    collector, back on, passes over what the tick makes (without gc.enable after the freeze it
    passed 0 times)."""
    path = registry(tmp_path)  # a first tick: it syncs the kinds and runs the housekeeping
    done = subprocess.run([sys.executable, "-c", COLLECTOR, "tick", "--registry", str(path),
                           "--database-url", db_url],
                          env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["status"] == 0, done.stderr[-2000:]
    assert seen["frozen"] > 10_000, seen  # psycopg, the parser and the tick's modules
    assert seen["starting"] < 15, seen  # those before main only (there were 71)
    assert seen["running"] >= 1, seen  # the collector is back for what the tick makes

