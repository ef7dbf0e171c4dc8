"""A queue that has run, for the pages that describe what a run sees and what the queue
reports: one real `tickq tick` of a small registry (a kind, a chain, a pool) on a fresh
database, whose commands write down the names of the variables they were given, then
`tickq metrics` on that queue."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from common import base_env, database, run_tickq

# Each command writes the sorted names of its environment to <label>.env.json.
DUMP = ("import json, os, sys; "
        "open(sys.argv[1] + '.env.json', 'w').write(json.dumps(sorted(os.environ)))")


def registry_text() -> str:
    dump = json.dumps([sys.executable, "-c", DUMP])[1:-1]
    return f"""\
[settings]
slots = 2

[pools.api]
slots = 1

[kinds.plain]
command = [{dump}, "kind"]
every = "5m"
timeout = "1m"
env = {{ KIND_OWN = "from the kind's env" }}
pools = ["api"]

[kinds.chained]
every = "1h"
timeout = "2m"

[[kinds.chained.steps]]
name = "first"
command = [{dump}, "step"]
timeout = "1m"
"""


class RanQueue(NamedTuple):
    dispatcher: frozenset[str]  # the variables the dispatcher was started with
    kind: frozenset[str]  # what a kind's command saw
    step: frozenset[str]  # what a chain step saw
    metrics: str  # `tickq metrics` of the queue afterwards


# What the dispatcher is started with besides base_env: secrets and settings a command must
# not see (a password in PGPASSWORD, the database URL).
SECRETS = {"PGPASSWORD": "not-for-commands", "LC_ALL": "C.UTF-8"}


def run(server_url: str, template: str | None = None) -> RanQueue:
    with (database(server_url, template) as url,
          tempfile.TemporaryDirectory(prefix="tickq-docs-") as tmp):
        folder = Path(tmp)
        (folder / "registry.toml").write_text(registry_text())
        env = {**base_env(folder), **SECRETS, "DATABASE_URL": url}
        run_tickq(["tick"], cwd=folder, env=env)
        metrics = run_tickq(["metrics"], cwd=folder, env=env)

        def seen(label: str) -> frozenset[str]:
            return frozenset(json.loads((folder / f"{label}.env.json").read_text()))

        return RanQueue(frozenset(env), seen("kind"), seen("step"), metrics)
