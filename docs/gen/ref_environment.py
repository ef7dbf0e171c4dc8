"""reference/environment.md: the variables a registry command sees, from a real run's
environment (ref_queue), and the variables tickq itself reads, found in its source.

Each variable needs a line below saying what it is: the generator fails for a variable a run
saw, or the source reads, that has none (and for a line about a variable nobody uses), so a
new variable cannot reach users undescribed.
"""

from __future__ import annotations

import ast
import re

from common import PACKAGE, code, header, table
from ref_queue import RanQueue

# What a registry command is given by tickq itself.
COMMAND = {
    "TICKQ_KIND": "the kind's name",
    "TICKQ_RUN_ID": "the run's id (`tickq history --run ID`)",
    "TICKQ_ATTEMPT": "1 for the first try of a slot, 2 for its first retry, ...",
    "TICKQ_TRIGGER": "`schedule`, `retry` or `manual`",
    "TICKQ_SLOT": "the latest scheduled instant the run stands for, ISO 8601 in UTC "
                  "(`2026-04-30T23:00:00Z`); empty for a manual run",
    "TICKQ_FIRST_SLOT": "the earliest slot merged into it (a run late by three hourly slots "
                        "covers four); empty for a manual run",
    "TICKQ_SLOTS": "how many slots it covers; 0 for a manual run. A retry carries the slots of "
                   "the run it retries",
    "TICKQ_RUN_TOKEN": "a token of the run's own, which every process it starts inherits: how "
                       "tickq finds processes that left the run's process group",
    "TICKQ_STEP": "a chain's step: its name",
    "TICKQ_STEP_N": "a chain's step: its place, from 1",
}
# What tickq reads, and what for.
READ = {
    "DATABASE_URL": "the database (the default of `--database-url`); never passed to a command, "
                    "wiped from what `/proc` shows of a tickq process, moved out of timer files",
    "PGPASSWORD": "libpq's password variable: wiped from what `/proc` shows of a tickq process",
    "PGPASSFILE": "libpq's password file; where a timer install writes a password "
                  "(default `~/.config/tickq/pgpass`)",
    "PGSERVICE": "libpq's service name: passed on to the timers",
    "PGSERVICEFILE": "libpq's service file: passed on to the timers",
    "PATH": "where a command's bare program name is looked up (its `env` PATH over it)",
    "TICKQ_REGISTRY": "the registry file (the default of `--registry`; else `./registry.toml`)",
    "TICKQ_LOG_FORMAT": "`text` or `json` (the default of `--log-format`)",
    "TICKQ_DATA_DIR": "the embedded PostgreSQL's data folder",
    "TICKQ_RUN_DIR": "the ledger folder of running commands and the spool (else "
                     "`<temp dir>/tickq-<uid>`)",
    "TICKQ_CACHE_DIR": "the cache of registry texts that passed the schema, and of the SQL "
                       "files' checksum (else the user's cache folder)",
    "TICKQ_AGENT_DATABASE_URL": "the agent runner's database URL, handed to it alone by the "
                                "dispatcher and taken out of its environment before a tool "
                                "starts",
    "TICKQ_RUN_ID": "read by the agent runner: the run it records turns for",
    "TICKQ_RUN_TOKEN": "set on every process of a run (above), read back from `/proc`",
    "COLUMNS": "the width `tickq status` fits its table to",
    "TZ": "`tickq legacy import`: the zone the old system read its times in (else "
          "`/etc/localtime`'s)",
    "TICKQ_SCRATCH_URL": "the server `check` and `simulate` make their scratch databases on (a "
                         "role there that may create databases; PostgreSQL itself, not a "
                         "pooler); else the embedded PostgreSQL",
    "PWD": "the folder as the shell names it: a relative registry path is taken from it, so a "
           "deploy's `current` link names the project, not the release behind it",
    "SUDO_USER": "the user who ran sudo: who armed an irreversible kind (`tickq run`), and whom "
                 "a system timer runs as without `--run-as`",
}
# Module-level constants that name variables (a tuple of names, or one name).
NAMING = re.compile(r"^[A-Z_]*(ENV|VARIABLE|VARIABLES|THROUGH)$")


def read_by_source() -> dict[str, set[str]]:
    """{variable: the modules that read it} from python_runner/tickq: `environ.get("X")`,
    `.pop`, `environ["X"]`, `os.getenv("X")`, and constants named like *_ENV, *_VARIABLES,
    PASSED_THROUGH that hold variable names."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        for name in _names(ast.parse(path.read_text())):
            found.setdefault(name, set()).add(where)
    return found


def _names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    # Module-level `NAME = "VARIABLE"`: a read through the constant reads the variable.
    constants = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
            receiver = ast.unparse(node.func.value)
            if (node.func.attr in ("get", "pop") and "environ" in receiver
                    or node.func.attr == "getenv"):
                names |= _strings(node.args[0], constants)
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
              and "environ" in ast.unparse(node.value)):
            names |= _strings(node.slice, constants)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and NAMING.match(t.id) for t in node.targets):
            names |= _strings(node.value)
    return {n for n in names if re.fullmatch(r"[A-Z][A-Z0-9_]+", n)}


def _strings(node: ast.AST, constants: dict[str, str] | None = None) -> set[str]:
    if isinstance(node, ast.Name) and constants and node.id in constants:
        return {constants[node.id]}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List):
        return {e.value for e in node.elts if isinstance(e, ast.Constant)
                and isinstance(e.value, str)}
    return set()


def _command_rows(ran: RanQueue) -> list[tuple[str, str, str]]:
    from tickq.host.process import INHERITED, INHERITED_PREFIXES

    rows = []
    order = {"tickq": 0, "the kind's": 1, "the dispatcher's environment": 2}
    for name in sorted(ran.kind | ran.step):
        if name in COMMAND:
            only = " (a chain's steps only)" if name not in ran.kind else ""
            rows.append((code(name), "tickq", COMMAND[name] + only))
        elif name == "KIND_OWN":
            rows.append(("each name of `env`", "the kind's `env` (a step's `env` over its "
                         "chain's)", "as the registry says"))
        elif name in INHERITED or name.startswith(INHERITED_PREFIXES):
            shown = f"{INHERITED_PREFIXES[0]}*" if name.startswith(INHERITED_PREFIXES) else name
            rows.append((code(shown), "the dispatcher's environment", "passed on as it is"))
        else:
            raise SystemExit(f"a command saw {name}, which environment.py does not describe")
    rows.sort(key=lambda row: (next(v for k, v in order.items() if row[1].startswith(k)),
                               row[0]))
    unused = set(COMMAND) - ran.kind - ran.step
    if unused:
        raise SystemExit(f"described but seen by no command: {sorted(unused)}")
    return rows


def page(ran: RanQueue) -> str:
    from tickq.host.process import INHERITED, INHERITED_PREFIXES

    read = read_by_source()
    if set(read) != set(READ):
        raise SystemExit(f"variables read but not described: {sorted(set(read) - set(READ))}; "
                         f"described but not read: {sorted(set(READ) - set(read))}")
    withheld = sorted(ran.dispatcher - ran.kind - ran.step)
    inherited = ", ".join(code(v) for v in INHERITED) + ", " + code(INHERITED_PREFIXES[0] + "*")
    return "\n".join([
        header("Environment variables", "a real tick's commands, and the variables "
               "python_runner/tickq reads"),
        INTRO.format(inherited=inherited),
        "## What a registry command sees\n",
        table(("variable", "from", "what"), _command_rows(ran)),
        "Not passed on, among the variables that run's dispatcher had: "
        + ", ".join(map(code, withheld)) + ".\n",
        AGENTS,
        "## What tickq reads\n",
        table(("variable", "what", "read in"),
              [(code(n), READ[n], ", ".join(sorted(read[n]))) for n in sorted(read)]),
    ])


INTRO = """
A registry command starts with an environment of its own, built from three sources: tickq's
`TICKQ_*` variables, the kind's `env`, and from the dispatcher's own environment only
{inherited}. Never `DATABASE_URL`, `PG*` or tickq's settings. What a late or merged run can do
with the slots it is given: [Catch-up](../how-to/catch-up.md).
"""

AGENTS = """
An agent's runner is started like a command, plus `TICKQ_AGENT_DATABASE_URL` and the variable
`[agents] api_key_env` names; it takes both out of its environment before a tool starts, so a
tool sees neither ([Agents](../how-to/agents.md)).
"""
