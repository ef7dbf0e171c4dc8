"""Commands whose dispatcher died, found and stopped by the next dispatcher on the same host.

Each command runs in a process group of its own, watched by a thread of the dispatcher that
started it. A dispatcher killed outright (SIGKILL, the OOM killer) leaves nothing watching the
group: the command would run on, past its timeout and unreported, and once its lease expired
the queue could start the kind again while the old command still ran. So each running command
has an entry in a ledger folder on its host, one small JSON file per process group, written
when the command starts and removed once its group is gone; and each dispatcher, before it
claims anything, stops every group whose dispatcher is no longer alive (SIGTERM, then SIGKILL
after the grace period). Those runs stay unreported: their leases expire into `lost`, as any
lease without a report does.

With the defaults (a tick every 5 minutes, a lease of the longest timeout plus 5 minutes), the
next tick on the host stops such a command before its lease can expire, so the kind is not
started again while it runs. A lease margin shorter than the tick narrows that guarantee.

The folder is $TICKQ_RUN_DIR, else ``<temp dir>/tickq-<uid>``: temporary storage on purpose,
since a reboot ends every command too. Processes are told apart by pid and start time, so a
pid the system reused for another program is never signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from tickq.host import descendants

_KILL_WAIT = 2.0


def default_folder(environ: Mapping[str, str] | None = None, uid: int | None = None) -> Path:
    """$TICKQ_RUN_DIR of `environ` (default os.environ), else <temp dir>/tickq-<uid> (of this
    process's user unless `uid` names another)."""
    configured = (os.environ if environ is None else environ).get("TICKQ_RUN_DIR")
    if configured:
        return Path(configured).absolute()
    return Path(tempfile.gettempdir()) / f"tickq-{os.getuid() if uid is None else uid}"


def _has_proc() -> bool:
    return Path("/proc/self/stat").exists()


def _stat_fields(stat_file: Path) -> list[str] | None:
    """The fields of a /proc/<pid>/stat after "pid (comm)" (comm may hold spaces and
    parentheses): state, ppid, pgrp, ...; None if the process is gone or has ended (a zombie)."""
    try:
        fields = stat_file.read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return fields if fields and fields[0] not in ("Z", "X") else None


def start_time(pid: int) -> str | None:
    """When process `pid` started, as an opaque token (None if there is no such process):
    pid and start time together name one process, even after the pid is reused."""
    if _has_proc():
        fields = _stat_fields(Path(f"/proc/{pid}/stat"))
        # Field 22 of proc(5), starttime, counts clock ticks from boot: with the boot's id it
        # names one process even if the ledger folder outlived a reboot.
        return None if fields is None else f"{_boot_id()}:{fields[19]}"
    # No /proc (macOS): ps prints the start time to the second.
    try:
        done = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "?"


def group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` is alive; zombies are not (an init that never reaps
    orphans, as in some containers, leaves them in the group forever)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False  # gone, or no longer ours to signal
    if not _has_proc():
        return True  # no /proc (macOS): killpg's answer is the best there is
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(entry / "stat")
            if fields is not None and len(fields) >= 3 and int(fields[2]) == pgid:
                return True
    return False


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(pgid, sig)


def wait_group_gone(
    pgid: int, seconds: float, leader: subprocess.Popen[bytes] | None = None
) -> bool:
    """Wait until no live member of group `pgid` is left; False after `seconds`. `leader`,
    when this process started the group, is reaped on the way (without /proc, an unreaped
    leader would look alive)."""
    deadline = time.monotonic() + seconds
    while True:
        if leader is not None:
            leader.poll()
        if not group_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


class Stopped(NamedTuple):
    """A command group stopped because the dispatcher that started it was gone (or, with no
    signal, one that had ended on its own after its dispatcher died)."""

    pgid: int
    signal: str | None  # the last signal it needed: SIGTERM or SIGKILL; None if it had ended
    entry: dict[str, Any]


class Ledger:
    """The running commands of this host, one file per process group."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_folder()
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.started = start_time(self.pid)

    @property
    def usable(self) -> bool:
        # Without a start time for ourselves, a live dispatcher could not be told from a dead
        # one: keep no ledger rather than risk stopping a watched command.
        return self.started is not None

    def record(self, pgid: int, **labels: Any) -> str | None:
        """Note a command group this dispatcher watches. Never fails the run: a ledger that
        cannot be written only loses this safety net; the reason is returned for the run's
        output."""
        if not self.usable:
            return None
        entry = {
            "pgid": pgid, "leader_started": start_time(pgid), "host": self.host,
            "dispatcher_pid": self.pid, "dispatcher_started": self.started, **labels,
        }
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._folder_is_private():
                return f"the ledger folder {self.folder} is not this user's alone (mode 0700)"
            temp = self.folder / f".{pgid}.tmp"
            temp.write_text(json.dumps(entry))
            os.replace(temp, self.folder / f"{pgid}.json")
        except OSError as exc:
            return f"cannot record the command in {self.folder}: {exc.strerror or exc}"
        return None

    def _folder_is_private(self) -> bool:
        """A folder (not a link) owned by this user that no one else may write to: the
        default one sits in a shared temp folder, where anyone could create it first."""
        try:
            st = self.folder.lstat()
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022

    def forget(self, pgid: int) -> None:
        with contextlib.suppress(OSError):
            (self.folder / f"{pgid}.json").unlink()

    def problem(self) -> str | None:
        """Why this ledger cannot protect anything (a folder someone else owns or may write
        to, or no start time for this process), else None. A folder not made yet is fine."""
        if not self.usable:
            return "this system gives no process start times: orphaned commands cannot be found"
        try:
            st = self.folder.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"the ledger folder {self.folder} cannot be read: {exc.strerror or exc}"
        if not stat.S_ISDIR(st.st_mode):
            return f"the ledger folder {self.folder} is not a folder"
        if st.st_uid != os.getuid():
            return (f"the ledger folder {self.folder} belongs to uid {st.st_uid}, not this user "
                    f"({os.getuid()}): commands of a killed dispatcher are never stopped; "
                    "remove it or set TICKQ_RUN_DIR")
        if st.st_mode & 0o022:
            return (f"the ledger folder {self.folder} may be written by others (mode "
                    f"{stat.S_IMODE(st.st_mode):04o}): commands of a killed dispatcher are never "
                    "stopped; chmod 700 it or set TICKQ_RUN_DIR")
        return None

    def dispatcher_gone(self, name: str) -> bool | None:
        """Whether dispatcher `name` ("host:pid") is provably not running: True when it is of
        this host and no live process has its pid, or the one that has it started at another
        time than the ledger recorded for that dispatcher; False when the ledger shows that very
        process alive; None when this host cannot tell (another host's, or a live pid the
        ledger has no entry of)."""
        host, _, pid_text = name.rpartition(":")
        if host != self.host or not pid_text.isdigit():
            return None
        started = start_time(int(pid_text))
        if started is None:
            return True
        for entry in self._entries():
            if entry.get("dispatcher") == name and entry.get("dispatcher_pid") == int(pid_text):
                return entry.get("dispatcher_started") != started
        return None

    def held_runs(self) -> set[int]:
        """The run ids whose commands a live dispatcher of this host runs now."""
        return {entry["run_id"] for entry in self._entries()
                if isinstance(entry.get("run_id"), int) and entry.get("host") == self.host
                and isinstance(entry.get("dispatcher_pid"), int)
                and start_time(entry["dispatcher_pid"]) == entry.get("dispatcher_started")}

    def _entries(self) -> list[dict[str, Any]]:
        """The entries of a private ledger folder (none of one others could write to)."""
        if not self._folder_is_private():
            return []
        found = []
        for path in sorted(self.folder.glob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                entry = json.loads(path.read_text())
                if isinstance(entry, dict):
                    found.append(entry)
        return found

    def reap(self, grace: float) -> list[Stopped]:
        """Stop every recorded group whose dispatcher is gone; forget groups that ended."""
        return [s for s in self.reap_dead(grace) if s.signal is not None]

    def reap_dead(self, grace: float) -> list[Stopped]:
        """Like `reap`, but also return the entries of dead dispatchers whose groups had ended
        (signal None): their runs' leases are held by no one and can be released at once."""
        if not self.usable or not self._folder_is_private():
            return []  # never act on entries others could have written
        stopped = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                entry = json.loads(path.read_text())
                pgid, host = int(entry["pgid"]), entry["host"]
                owner = (int(entry["dispatcher_pid"]), entry["dispatcher_started"])
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not an entry of ours (entries are renamed into place whole)
            if host != self.host or start_time(owner[0]) == owner[1]:
                continue  # another host's, or its dispatcher still watches it
            leader = start_time(pgid)
            # Processes that left the group still carry the run's token (tickq.descendants);
            # with the dispatcher gone they were re-parented to init, so look everywhere.
            token = entry.get("token")
            escaped = descendants.Tree(-1, str(token), anywhere=True) if token else None
            if not group_alive(pgid) or (leader is not None and leader != entry["leader_started"]):
                # Ended (or the pid now names another process: while any member of the old
                # group lived, the system could not have reused it).
                if escaped is not None and escaped.kill():
                    stopped.append(Stopped(pgid, signal.SIGKILL.name, entry))
                self.forget(pgid)
                stopped.append(Stopped(pgid, None, entry))
                continue
            sent = signal.SIGTERM
            signal_group(pgid, sent)
            if escaped is not None:
                escaped.signal(sent)
            if not wait_group_gone(pgid, grace):
                sent = signal.SIGKILL
                signal_group(pgid, sent)
                wait_group_gone(pgid, _KILL_WAIT)
            if escaped is not None:
                escaped.kill()
            self.forget(pgid)
            stopped.append(Stopped(pgid, sent.name, entry))
        return stopped
