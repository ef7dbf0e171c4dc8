"""Every bad value has one judge, the database, and none escapes: each is refused with exit 2 by
`tickq sync`, `tick`, `check` and `simulate` (real subprocesses), in one line per problem naming
the key the user wrote, never a traceback nor a raw SQLSTATE. The bounds come from the rows of
tickq.registry_limits, so a bound added there is tried here without a new line."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest

from tickq.registry import Kind, Settings

REPO = Path(__file__).resolve().parent.parent
COMMANDS = ("sync", "tick", "check", "simulate")
KIND = 'command = ["true"]\nevery = "5m"\ntimeout = "30s"\n'
AGENTS = '[agents]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
TOOL = '[agents.tools.t]\ncommand = ["true"]\ndescription = "a tool"\n'

# name: (registry TOML, the key every command must name). Each was let through once.
CASES = {
    "db_connect_timeout 0s": ('[settings]\ndb_connect_timeout = "0s"\n',
                              "settings.db_connect_timeout"),
    "db_statement_timeout 0s": ('[settings]\ndb_statement_timeout = "0s"\n',
                                "settings.db_statement_timeout"),
    "db_lock_timeout 0s": ('[settings]\ndb_lock_timeout = "0s"\n', "settings.db_lock_timeout"),
    "db_connect_timeout 3650d": ('[settings]\ndb_connect_timeout = "3650d"\n',
                                 "settings.db_connect_timeout"),
    "db_statement_timeout 3650d": ('[settings]\ndb_statement_timeout = "3650d"\n',
                                   "settings.db_statement_timeout"),
    "db_lock_timeout 3650d": ('[settings]\ndb_lock_timeout = "3650d"\n',
                              "settings.db_lock_timeout"),
    "tick 0s": ('[settings]\ntick = "0s"\n', "settings.tick"),
    "capacity_margin nan": ("[settings]\ncapacity_margin = nan\n", "settings.capacity_margin"),
    "capacity_margin inf": ("[settings]\ncapacity_margin = inf\n", "settings.capacity_margin"),
    "capacity_margin -inf": ("[settings]\ncapacity_margin = -inf\n", "settings.capacity_margin"),
    "housekeeping_timeout 0s": ('[settings]\nhousekeeping_timeout = "0s"\n',
                                "settings.housekeeping_timeout"),
    "agents max_turns 7": (AGENTS + "max_turns = 7\n", "agents.max_turns"),
    "agents timeout 11m": (AGENTS + 'timeout = "11m"\n', "agents.timeout"),
    "agents retries -1": (AGENTS + "retries = -1\n", "agents.retries"),
    "tool timeout 6m": (AGENTS + TOOL + 'timeout = "6m"\n', "agents.tools.t.timeout"),
    # weights and pools: the rules between keys, from the file as from JSON
    "unknown pool": ('[kinds.b]\n' + KIND + 'pools = ["gpu"]\n', "pools"),
    "weight over slots": ('[settings]\nslots = 2\n[kinds.b]\n' + KIND + "weight = 3\n", "weight"),
    "agents weight over slots": ("[settings]\nslots = 2\n" + AGENTS + "weight = 3\n",
                                 "agents.weight"),
    "pool slots 0": ("[pools.gpu]\nslots = 0\n", "pools.gpu.slots"),
}
# A kind name the user wrote with a control character in it: named, escaped, in the message.
NAMES = {"NUL in a kind name": "a\\u0000b", "control character in a kind name": "a\\u0001b"}


def tickq_all(path: Path, url: str) -> dict[str, subprocess.CompletedProcess[str]]:
    """The four commands on `path`, run at once (each a real `python -m tickq.cli`)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p)
    running = {}
    for command in COMMANDS:
        args = [command, "--registry", str(path), "--database-url", url]
        if command == "simulate":
            args += ["--hours", "1"]
        running[command] = subprocess.Popen(
            [sys.executable, "-m", "tickq.cli", *args], env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = {}
    for command, process in running.items():
        out, err = process.communicate(timeout=120)
        done[command] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done


def refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.args, result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert "SQLSTATE" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines and all(line.startswith("tickq: ") for line in lines), result.stderr
    return result.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_value_is_refused_naming_its_key(tmp_path: Path, db_url: str, case: str) -> None:
    text, key = CASES[case]
    path = tmp_path / "registry.toml"
    path.write_text(text + "\n[kinds.a]\n" + KIND)
    for command, result in tickq_all(path, db_url).items():
        assert f'key "{key}"' in refused(result), (command, result.stderr)


@pytest.mark.parametrize("case", list(NAMES))
def test_a_control_character_in_a_kind_name_is_refused_naming_the_kind(
    tmp_path: Path, db_url: str, case: str
) -> None:
    name = NAMES[case]
    path = tmp_path / "registry.toml"
    path.write_text(f'[kinds."{name}"]\n' + KIND)
    for command, result in tickq_all(path, db_url).items():
        stderr = refused(result)
        assert f'kind "{name}"' in stderr, (command, stderr)
        assert "\x00" not in stderr and "\x01" not in stderr


# ---------------------------------------------------------------- the bounds table

SETTINGS_KEYS = set(Settings._fields)
# Bounds on the calendar's lists: each written as the file writes it, on a kind with at times.
AT_KIND = 'command = ["true"]\nat = "06:00"\ntimeout = "30s"\n'
CALENDAR = {
    "days": lambda n: f"days = [{n}]",
    "months": lambda n: f"months = [{n}]",
    "on.nth": lambda n: f'on = ["{n}{"st" if n == 1 else "th"} mon"]',
}
KIND_KEYS = set(Kind._fields)
# An agent row's own bounds (agent.every, agent.prompt...): no key of the registry file; judged
# at `tickq agent add` and tried by tests_sql/96-agent-bounds.sql.
AGENT_ROW = "agent."


def limits(url: str) -> list[tuple[str, Decimal, Decimal, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT key, low, high, unit FROM tickq.registry_limits()").fetchall()


def _value(value: Decimal, unit: str, fraction: bool) -> str:
    if unit == "s":
        return f'"{int(value)}s"'
    if unit == "chars":  # the length of a name
        return f'"{"p" * int(value)}"'
    return f"{value:f}" if fraction else f"{int(value)}"


Limit = tuple[str, Decimal, Decimal, str]


def out_of_bounds(rows: list[Limit], side: str) -> tuple[str, list[str]]:
    """A registry holding every bound of `rows` crossed on `side` (one kind per kind key, each
    setting on its own), and the keys the user wrote for them."""
    settings, agents, tool, kinds, pools, keys = [], [], [], [], [], []
    for key, low, high, unit in rows:
        if key.startswith(AGENT_ROW):
            continue
        fraction = low != int(low) or high != int(high)
        step = Decimal("0.01") if fraction else Decimal(1)
        value = low - step if side == "below" else high + step
        if unit in ("s", "chars") and value < 0:
            continue  # no duration is written below 0s, no name below no characters
        text = _value(value, unit, fraction)
        if key.startswith("agents.tools."):
            tool.append(f"{key.rsplit('.', 1)[1]} = {text}")
            keys.append(f"agents.tools.t.{key.rsplit('.', 1)[1]}")
        elif key.startswith("pools."):  # a pool's key stands for every pool
            pools.append(f"[pools.p]\n{key.rsplit('.', 1)[1]} = {text}\n")
            keys.append(f"pools.p.{key.rsplit('.', 1)[1]}")
        elif key.startswith("agents."):
            agents.append(f"{key.split('.', 1)[1]} = {text}")
            keys.append(key)
        elif key in SETTINGS_KEYS:
            settings.append(f"{key} = {text}")
            keys.append(f"settings.{key}")
        elif key in CALENDAR:
            name = f"k-{key.replace('.', '-')}"
            kinds.append(f"[kinds.{name}]\n{AT_KIND}{CALENDAR[key](int(value))}\n")
            keys.append(f'kind "{name}", key "{key.split(".")[0]}"')
        elif key in KIND_KEYS:
            name = f"k-{key}"
            body = KIND.replace(f"{key} = ", "# ") + f"{key} = {text}\n"
            if key == "timeout":  # the cadence must not refuse first
                body = body.replace('every = "5m"', 'every = "30d"')
            kinds.append(f"[kinds.{name}]\n{body}")
            keys.append(f'kind "{name}", key "{key}"')
        else:
            raise AssertionError(f"bound {key} is on no key of the registry file")
    text = "[settings]\n" + "\n".join(settings) + "\n\n" + AGENTS + "\n".join(agents) + "\n\n"
    text += TOOL + "\n".join(tool) + "\n\n" + "\n".join(kinds) + "\n" + "\n".join(pools)
    return text, keys


@pytest.mark.parametrize("side", ["below", "above"])
def test_every_bound_is_refused_just_past_it(tmp_path: Path, db_url: str, side: str) -> None:
    text, keys = out_of_bounds(limits(db_url), side)
    path = tmp_path / "registry.toml"
    path.write_text(text)
    for command, result in tickq_all(path, db_url).items():
        stderr = refused(result)
        for key in keys:
            named = key if key.startswith("kind ") else f'key "{key}"'
            assert named in stderr, (command, key, stderr)


def test_the_bounds_themselves_are_taken(tmp_path: Path, db_url: str) -> None:
    """The other side of the test above: every bound itself is a value the registry may hold."""
    rows = limits(db_url)
    settings, agents, tool, calendar = [], [], [], []
    for key, low, high, unit in rows:
        if key.startswith(AGENT_ROW):
            continue
        fraction = low != int(low) or high != int(high)
        for value in (low, high):
            if value <= 0 and unit == "s":
                continue
            text = _value(value, unit, fraction)
            target = (tool if key.startswith("agents.tools.") else agents
                      if key.startswith("agents.") else settings if key in SETTINGS_KEYS else None)
            if target is not None and value == high:
                target.append(f"{key.split('.')[-1]} = {text}")
            if key in CALENDAR:
                calendar.append(f"[kinds.c-{key.replace('.', '-')}-{value}]\n{AT_KIND}"
                                f"{CALENDAR[key](int(value))}\n")
    # Settings at their upper bounds must also agree with each other: retry_base <= retry_max.
    settings = [s for s in settings if not s.startswith(("retry_base", "slots", "keep_runs"))]
    # ...and a weight is at most slots (tickq.weight_problems): the agents' stays at its default.
    agents = [a for a in agents if not a.startswith("weight")]
    path = tmp_path / "registry.toml"
    path.write_text("[settings]\n" + "\n".join(settings) + "\n\n" + AGENTS + "\n".join(agents)
                    + "\n\n" + TOOL + "\n".join(tool) + "\n\n[kinds.a]\n" + KIND + "\n"
                    + "\n".join(calendar))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    result = subprocess.run([sys.executable, "-m", "tickq.cli", "sync", "--registry", str(path),
                             "--database-url", db_url], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
