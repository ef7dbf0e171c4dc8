"""Results the database could not take, kept on the host until it can.

When a report fails for longer than the dispatcher's reconnect budget, the result is written
to ``<ledger folder>/spool/<run id>.json`` (mode 0600, fsync'd, renamed into place whole) and
the next `tick` or `run` on the host reports it through ``tickq.report_late_run``: a run still
leased is finished as usual; a run whose lease expired into `lost` gets its real outcome,
marked late, and a late success undoes the failure `lost` counted when nothing has run the
kind since. So a database outage of any length loses no result and repeats no command that
succeeded, as long as the host and its ledger folder survive it (the default ledger folder is
under the temp folder, which a reboot may empty: set TICKQ_RUN_DIR to keep it elsewhere).

Only a folder that is this user's alone is read: anyone who could write a file there could
report outcomes in this dispatcher's name.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Spooled:
    path: Path
    result: dict[str, Any]  # run_id, kind, dispatcher, outcome, exit_code, output_tail, duration


class Spool:
    def __init__(self, ledger_folder: Path) -> None:
        self.folder = ledger_folder / "spool"

    def save(self, result: dict[str, Any]) -> Path:
        """Write one result durably; raises OSError when it cannot."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self._private():
            raise OSError(f"{self.folder} is not this user's alone (mode 0700)")
        run_id = int(result["run_id"])
        final = self.folder / f"{run_id}.json"
        temp = self.folder / f".{run_id}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(result, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        # The rename is durable once the folder is.
        dir_fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return final

    def pending(self) -> list[Spooled]:
        """The results waiting, oldest run first; none from a folder others could write to."""
        if not self.folder.exists() or not self._private():
            return []
        found = []
        for path in self.folder.glob("*.json"):
            try:
                if path.lstat().st_uid != os.getuid():
                    continue
                result = json.loads(path.read_text(encoding="utf-8"))
                int(result["run_id"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            found.append(Spooled(path, result))
        return sorted(found, key=lambda s: int(s.result["run_id"]))

    def forget(self, spooled: Spooled) -> None:
        with contextlib.suppress(OSError):
            spooled.path.unlink()

    def _private(self) -> bool:
        try:
            st = self.folder.lstat()
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
