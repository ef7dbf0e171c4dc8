"""A folder for the `tickq legacy` tests: bin/argv (prints its argv, folder and two variables
as JSON), also in jobs/, and the programs their registries name (legacy check fails on one that
cannot start)."""

from __future__ import annotations

import sys
from pathlib import Path

ARGV_PROGRAM = f"""\
#!{sys.executable}
import json, os, sys
print(json.dumps({{"argv": sys.argv[1:], "cwd": os.path.basename(os.getcwd()),
                  "x": os.environ.get("LEGACY_X"), "y": os.environ.get("LEGACY_Y")}}))
"""


def make_folder(root: Path) -> Path:
    for where in (root, root / "jobs"):
        (where / "bin").mkdir(parents=True)
        program = where / "bin" / "argv"
        program.write_text(ARGV_PROGRAM)
        program.chmod(0o755)
    for name in ("bin/sf", "bin/payout", "bin/publish", "bin/slack", "jobs/bin/ingest"):
        (root / name).write_text("#!/bin/sh\n")
        (root / name).chmod(0o755)
    return root
