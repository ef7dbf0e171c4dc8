"""Results the database could not take, kept on the host until it can.

When a report fails for longer than the dispatcher's reconnect budget, the result is written
to ``<ledger folder>/spool/<run id>.json`` (mode 0600, fsync'd, renamed into place whole) and
the next `tick` or `run` on the host reports it through ``tickq.report_late_run``: a run still
leased is finished as usual; a run whose lease expired into `lost` gets its real outcome,
marked late, and a late success undoes the failure `lost` counted when nothing has run the
kind since. So a database outage of any length loses no result and repeats no command that
succeeded, as long as the host and its ledger folder survive it (the default ledger folder is
under the temp folder, which a reboot may empty: set TICKQ_RUN_DIR to keep it elsewhere).

A spool file is untrusted input. Only a folder that is this user's alone is read (anyone who
could write a file there could report outcomes in this dispatcher's name): a folder that is a
symlink, another user's, or open to its group or others is refused, and `scan` says why. In a
private folder only regular files of this user, at most MAX_FILE_BYTES, are read, never
through a symlink and never waiting (a FIFO is not opened for reading); each field is checked.
What cannot be applied is moved aside into ``spool/rejected/``, named with the reason, so one
bad file never stops the others.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, NamedTuple, get_args

from tickq.host.process import Outcome
from tickq.host.tail import MAX_TAIL_CHARS

# A result's output tail, JSON-escaped (at most 12 bytes a character), and the rest.
MAX_FILE_BYTES = 12 * MAX_TAIL_CHARS + 65536
MAX_RUN_ID = 2**63 - 1  # job_run.id is a bigint
MAX_EXIT_CODE = 2**31 - 1  # job_run.exit_code is an integer
MAX_DURATION_S = 10 * 366 * 86400.0  # no run lasts longer than ten years
REPORTED_OUTCOMES: tuple[str, ...] = get_args(Outcome)
NAME = re.compile(r"[1-9][0-9]{0,18}\.json")
REJECTED = "rejected"


class Spooled(NamedTuple):
    path: Path
    result: dict[str, Any]  # run_id, kind, dispatcher, outcome, exit_code, output_tail, duration


class Rejected(NamedTuple):
    name: str  # the file's name in the spool folder
    reason: str
    moved_to: Path | None  # None when it could not be moved aside (then the reason says why)


class Scan:
    """What one look at the spool found: results to report, files moved aside, and why the
    folder was not read at all (None when it was, or when there is none)."""

    def __init__(self) -> None:
        self.results: list[Spooled] = []
        self.rejected: list[Rejected] = []
        self.refused: str | None = None


class Spool:
    """The results in `<ledger folder>/<name>`: `spool` for results the database has yet to
    take, `reported` for reports a tick keeps after the database took them (an asynchronous
    failover may still lose them: tickq.dispatch.kept), read and written by the same rules."""

    def __init__(self, ledger_folder: Path, name: str = "spool") -> None:
        self.folder = ledger_folder / name

    def save(self, result: dict[str, Any], durable: bool = True) -> Path:
        """Write one result, durably (fsync'd) unless told otherwise; raises OSError when it
        cannot."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = self.problem()
        if problem:
            raise OSError(problem)
        run_id = int(result["run_id"])
        final = self.folder / f"{run_id}.json"
        temp = self.folder / f".{run_id}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(result, f)
                f.flush()
                if durable:
                    os.fsync(f.fileno())
            os.replace(temp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        if not durable:
            return final
        # The rename is durable once the folder is.
        dir_fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return final

    def scan(self) -> Scan:
        """The results waiting, oldest run first; every file that is no result moved aside."""
        found = Scan()
        found.refused = self.problem()
        if found.refused or not os.path.lexists(self.folder):
            return found
        try:
            names = sorted(os.listdir(self.folder))
        except OSError as exc:
            found.refused = f"{self._named()} cannot be read: {exc.strerror}"
            return found
        for name in names:
            if name.startswith(".") or name == REJECTED:
                continue  # a result being written (renamed into place whole), or the aside
            try:
                result = self._read(name)
            except _Unusable as exc:
                found.rejected.append(self.reject(name, str(exc)))
                continue
            if result is not None:
                found.results.append(Spooled(self.folder / name, result))
        found.results.sort(key=lambda s: s.result["run_id"])
        return found

    def forget(self, spooled: Spooled) -> None:
        with contextlib.suppress(OSError):
            spooled.path.unlink()

    def reject(self, name: str, reason: str) -> Rejected:
        """Move spool file `name` into rejected/ (never over another file there)."""
        aside = self.folder / REJECTED
        try:
            with contextlib.suppress(FileExistsError):
                aside.mkdir(mode=0o700)
            st = aside.lstat()
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                raise OSError(f"{aside} is not a folder of this user's")
            target, n = aside / name, 0
            while os.path.lexists(target):
                n += 1
                target = aside / f"{name}.{n}"
            os.rename(self.folder / name, target)
        except OSError as exc:
            cause = exc.strerror or str(exc)
            return Rejected(name, f"{reason}; not moved aside: {cause}", None)
        return Rejected(name, reason, target)

    def rejected_count(self) -> int:
        """How many files wait in rejected/ for a person to look at them."""
        try:
            return sum(1 for _ in os.scandir(self.folder / REJECTED))
        except OSError:
            return 0

    def problem(self) -> str | None:
        """Why the spool folder is not read (nor written): a symlink, a folder of another user
        or one its group or others may enter; None when it is private or not made yet."""
        try:
            st = self.folder.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{self._named()} cannot be read: {exc.strerror or exc}"
        fix = "kept results are not reported until it is this user's alone (mode 0700)"
        folder = self._named()
        if stat.S_ISLNK(st.st_mode):
            return f"{folder} is a symlink: {fix}"
        if not stat.S_ISDIR(st.st_mode):
            return f"{folder} is not a folder: {fix}"
        if st.st_uid != os.getuid():
            return f"{folder} belongs to uid {st.st_uid}, not this user ({os.getuid()}): {fix}"
        if st.st_mode & 0o077:
            return (f"{folder} is open to its group or others (mode "
                    f"{stat.S_IMODE(st.st_mode):04o}): {fix}; chmod 700 it")
        return None

    def _named(self) -> str:
        return f"the {self.folder.name} folder {self.folder}"

    def _read(self, name: str) -> dict[str, Any] | None:
        """The checked result in file `name`; None if it is gone (another dispatcher took
        it); _Unusable if it is no result."""
        if not NAME.fullmatch(name):
            raise _Unusable("not a spool file's name (<run id>.json)")
        path = self.folder / name
        try:
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode):
                raise _Unusable(f"not a regular file ({_what(st.st_mode)})")
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _Unusable(f"cannot be opened: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _Unusable(f"not a regular file ({_what(st.st_mode)})")
            if st.st_uid != os.getuid():
                raise _Unusable(f"belongs to uid {st.st_uid}, not this user")
            if st.st_size > MAX_FILE_BYTES:
                raise _Unusable(f"{st.st_size} bytes, more than a result's {MAX_FILE_BYTES}")
            data = os.read(fd, MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise _Unusable(f"cannot be read: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        if len(data) > MAX_FILE_BYTES:
            raise _Unusable(f"more than a result's {MAX_FILE_BYTES} bytes")
        result = checked(data)
        if str(result["run_id"]) != name.removesuffix(".json"):
            raise _Unusable(f"holds run_id {result['run_id']}, not the one its name gives")
        return result


class _Unusable(Exception):
    """A spool file that is no result this dispatcher could have written; the text says why."""


def checked(data: bytes) -> dict[str, Any]:
    """The result a spool file's bytes hold, every field checked; _Unusable if not."""
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Unusable(f"not JSON: {str(exc).splitlines()[0][:200]}") from None
    if not isinstance(doc, dict):
        raise _Unusable("not a JSON object")
    run_id, exit_code, duration = doc.get("run_id"), doc.get("exit_code"), doc.get("duration")
    if not _is_int(run_id) or not 0 < run_id <= MAX_RUN_ID:
        raise _Unusable(f"run_id {_shown(run_id)} is not a run's id (1 to {MAX_RUN_ID})")
    if doc.get("outcome") not in REPORTED_OUTCOMES:
        raise _Unusable(f"outcome {_shown(doc.get('outcome'))} is not one of "
                        + ", ".join(REPORTED_OUTCOMES))
    if exit_code is not None and not (_is_int(exit_code) and abs(exit_code) <= MAX_EXIT_CODE):
        raise _Unusable(f"exit_code {_shown(exit_code)} is not an integer exit status")
    if not (_is_int(duration) or isinstance(duration, float)) or not (
            math.isfinite(duration) and 0 <= duration <= MAX_DURATION_S):
        raise _Unusable(f"duration {_shown(duration)} is not a number of seconds")
    for key in ("dispatcher", "output_tail"):
        if not isinstance(doc.get(key), str):
            raise _Unusable(f"{key} {_shown(doc.get(key))} is not a string")
    if doc.get("kind") is not None and not isinstance(doc["kind"], str):
        raise _Unusable(f"kind {_shown(doc['kind'])} is not a string")
    if not doc["dispatcher"]:
        raise _Unusable("dispatcher is empty")
    for key in ("dispatcher", "output_tail", "kind"):
        if "\x00" in (doc.get(key) or ""):  # the runner replaces NUL; PostgreSQL refuses it
            raise _Unusable(f"{key} holds a NUL character")
    if len(doc["output_tail"]) > MAX_TAIL_CHARS:
        raise _Unusable(f"output_tail is longer than {MAX_TAIL_CHARS} characters")
    # What a kept report adds (checked by tickq.dispatch.kept, which alone reads it).
    kept = doc.get("kept") if isinstance(doc.get("kept"), dict) else None
    return {"run_id": run_id, "kind": doc.get("kind"), "dispatcher": doc["dispatcher"],
            "outcome": doc["outcome"], "exit_code": exit_code,
            "output_tail": doc["output_tail"], "duration": float(duration), "kept": kept}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _what(mode: int) -> str:
    for test, what in ((stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return what
    return "not a file"
