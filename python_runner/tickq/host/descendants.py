"""Every process a command started, also those that left its process group.

A process group is not a fence: a command can leave it with setsid(), setpgid() or a double
fork, and a signal to the group then misses it. On Linux the dispatcher makes itself a child
subreaper (prctl(PR_SET_CHILD_SUBREAPER)), so a process orphaned under it is re-parented to it
instead of to init: whatever a command starts stays below the dispatcher, and /proc shows the
whole tree. Each run's processes carry a token of their own in their environment
(TICKQ_RUN_TOKEN), which they inherit through any fork, so a process re-parented to the
dispatcher is told apart from another run's; processes seen below a run's leader are also
remembered (by pid and start time), for one that clears its environment.

Without /proc (macOS) none of this is possible: there the process group is all tickq can
signal (docs/explanation/security.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

TOKEN_VARIABLE = "TICKQ_RUN_TOKEN"
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_KILL_ROUNDS = 20  # a command forking as fast as it can still loses: each round kills a layer

_subreaper: bool | None = None
_subreaper_lock = threading.Lock()


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux); True when it is one. Done once, lazily:
    processes started before (the embedded PostgreSQL a tick may start) are not adopted."""
    global _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            _subreaper = False
            if sys.platform.startswith("linux"):
                with contextlib.suppress(OSError, AttributeError):
                    libc = ctypes.CDLL(None, use_errno=True)
                    _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        return _subreaper


def has_proc() -> bool:
    return Path("/proc/self/stat").exists()


class Proc(NamedTuple):
    pid: int
    ppid: int
    pgrp: int
    started: str  # start time in clock ticks since boot: with the pid, names one process
    comm: str


def _stat(pid: int) -> tuple[str, Proc] | None:
    """The state letter and fields of /proc/<pid>/stat, None if there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    if len(fields) < 20:
        return None
    return fields[0], Proc(pid, int(fields[1]), int(fields[2]), fields[19], head.partition("(")[2])


def _read(pid: int) -> Proc | None:
    """The process's /proc/<pid>/stat, None if gone or a zombie."""
    found = _stat(pid)
    return None if found is None or found[0] in ("Z", "X") else found[1]


def process_table() -> dict[int, Proc]:
    table = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                proc = _read(int(entry.name))
                if proc is not None:
                    table[proc.pid] = proc
    return table


def carries(pid: int, marker: bytes) -> bool:
    """Whether the environment process `pid` started with holds `marker` (NAME=value)."""
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return marker in data.split(b"\0")


class Tree:
    """The live processes of one run: its leader's descendants, processes re-parented to this
    process that carry the run's token, and their descendants."""

    def __init__(self, leader: int, token: str, *, anywhere: bool = False) -> None:
        self.leader = leader
        self.marker = f"{TOKEN_VARIABLE}={token}".encode()
        self.anywhere = anywhere  # look for the token in every process, not only our children
        self.seen: dict[int, str] = {}
        self._me = os.getpid()
        # The leader by pid and start time too: once its Popen has reaped it, its pid may name
        # another program.
        leader_proc = _read(leader) if leader > 0 and has_proc() else None
        self._leader_started = leader_proc.started if leader_proc else None

    def scan(self) -> dict[int, Proc]:
        """The run's live processes now (the leader included, while alive)."""
        if not has_proc():
            return {}
        table = process_table()
        leader = table.get(self.leader)
        roots = {self.leader} if leader and leader.started == self._leader_started else set()
        roots |= {pid for pid, started in self.seen.items()
                  if pid in table and table[pid].started == started}
        for proc in table.values():
            if proc.pid in roots or proc.pid == self._me:
                continue
            if (self.anywhere or proc.ppid == self._me) and carries(proc.pid, self.marker):
                roots.add(proc.pid)
        children: dict[int, list[int]] = {}
        for proc in table.values():
            children.setdefault(proc.ppid, []).append(proc.pid)
        members: dict[int, Proc] = {}
        todo = list(roots)
        while todo:
            pid = todo.pop()
            if pid in members or pid == self._me or pid not in table:
                continue
            members[pid] = table[pid]
            todo.extend(children.get(pid, ()))
        for pid, proc in members.items():
            self.seen[pid] = proc.started
        return members

    def signal(self, sig: signal.Signals) -> dict[int, Proc]:
        """Send `sig` to every live process of the run; return those signalled."""
        members = self.scan()
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        self.reap()
        return members

    def kill(self) -> dict[int, Proc]:
        """SIGKILL until nothing of the run is left (a process forking while it dies leaves
        children for the next round); return every process killed."""
        killed: dict[int, Proc] = {}
        for _ in range(_KILL_ROUNDS):
            members = self.signal(signal.SIGKILL)
            if not members:
                break
            killed.update(members)
            time.sleep(0.02)
        self.reap()
        return killed

    def reap(self) -> None:
        """Collect the exit status of processes re-parented to us (the leader is its Popen's),
        so none stays a zombie."""
        for pid, started in list(self.seen.items()):
            found = _stat(pid)
            if found is None:
                self.seen.pop(pid, None)
                continue
            state, proc = found
            # Only our own zombie with the start time we saw: never another run's leader that
            # got a reused pid (its exit status belongs to its Popen).
            ours = proc.ppid == self._me and proc.started == started
            if pid == self.leader or state != "Z" or not ours:
                continue
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
            self.seen.pop(pid, None)


def describe(procs: dict[int, Proc], limit: int = 10) -> str:
    """`1234 (sleep), 1240 (python3)`, at most `limit` of them."""
    shown = [f"{p.pid} ({p.comm})" for p in sorted(procs.values(), key=lambda p: p.pid)]
    more = len(shown) - limit
    return ", ".join(shown[:limit]) + (f" and {more} more" if more > 0 else "")
