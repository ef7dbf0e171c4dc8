"""`python -m tickq.agents AGENT_ID`: one agent run, the default runner of [agents].

What the dispatcher starts for a claim of `agent.<name>`: the registry is $TICKQ_REGISTRY (the
dispatcher sets it) or ./registry.toml, the database the one the dispatcher hands over
(tickq.agents.runner.database_url). Exit 0 ok, 1 failed, 2 configuration, 3 no database.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

from tickq.agents.runner import DATABASE_ENV, EXIT_CONFIG, database_url, execute
from tickq.host.private import keep_private
from tickq.registry import RegistryError, load_registry

EXIT_DATABASE = 3


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1 or not re.fullmatch(r"[1-9][0-9]{0,17}", argv[0]):
        print("usage: python -m tickq.agents AGENT_ID: an agent id is a positive whole number",
              file=sys.stderr)
        return EXIT_CONFIG
    try:
        registry = load_registry(os.environ.get("TICKQ_REGISTRY", "registry.toml"))
    except RegistryError as exc:
        for problem in exc.problems:
            print(f"tickq: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    # The database URL and the model's key, out of reach of the tools this runner starts, which
    # could read its environment through /proc (tickq.host.private).
    keep_private([DATABASE_ENV, "DATABASE_URL", "PGPASSWORD",
                  registry.agents.api_key_env if registry.agents else None])
    try:
        url = database_url(None)
    except Exception as exc:  # the embedded server failed to start
        print(f"tickq: cannot start the embedded PostgreSQL: {exc}", file=sys.stderr)
        return EXIT_DATABASE
    return execute(int(argv[0]), registry, url)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
