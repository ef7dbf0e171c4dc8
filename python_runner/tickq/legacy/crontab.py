"""A crontab read as Debian's cron (3.0pl1) reads it: user crontabs, `/etc/crontab` and
`/etc/cron.d/*` (whose lines name a user after the five time fields).

Each physical line (cron continues none) is a comment, a variable (`NAME = value`, quotes
taken off, applying to the lines below it) or a job. A job runs as its user, in the user's home
folder (HOME), with cron's environment: the crontab's variables, SHELL (default /bin/sh), HOME
(default the user's), PATH (default /usr/bin:/bin) and LOGNAME (always the user). What cron
refuses (a field out of range, day of the month 0, a user with no account) it refuses for the
whole file; here the line is refused and the rest imported, each kind saying so.

A moved line keeps its place behind a `#tickq:KIND# ` marker (a comment to cron), so taking the
marker off is the rollback.
"""

from __future__ import annotations

import os
import pwd
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from tickq.legacy import clock, cron, cronline
from tickq.legacy.oldjob import OldCommand, OldJob, Refusal
from tickq.legacy.shell import unmark
from tickq.legacy.words import Untranslatable

_VARIABLE = re.compile(r"\s*([^\s=]+)\s*=\s*(.*)", re.DOTALL)
_SYSTEM_HEADER = re.compile(r"#.*(\bdow\s+user\b|\buser-name\b|/etc/cron\.d/|/etc/crontab)")
_USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\$?")
CRON_PATH = "/usr/bin:/bin"  # Debian's cron's PATH when the crontab sets none


def _entry_tokens(text: str) -> list[str] | None:
    """The time fields of `text` when it is shaped like a job line (five fields or an @word
    first), else None."""
    words = text.split()
    if words and re.fullmatch(r"@[A-Za-z]+", words[0]):
        return words[:1]
    if len(words) >= 5 and all(cron.FIELD_WORD.fullmatch(w) for w in words[:5]) \
            and (words[0][0].isdigit() or words[0][0] == "*"):
        return words[:5]
    return None


def is_crontab(path: Path, text: str) -> bool:
    """A crontab: no `#!` line, and a job line among its lines."""
    if text.startswith("#!"):
        return False
    return any(_entry_tokens(unmark(line)[1]) for line in text.split("\n"))


def is_system(path: Path, text: str) -> bool:
    """A crontab whose lines name a user: /etc/crontab, a file in a cron.d folder (or named
    `cron.d`, as Debian packages keep it), one whose header says so, or one whose every job
    runs "root"; never one where a word in the user's place could be no user name
    (`PATH=...`, a path)."""
    if not is_crontab(path, text):
        return False
    lines = [unmark(line)[1] for line in text.split("\n")]
    users = [line.split()[len(t)] for line in lines
             if (t := _entry_tokens(line)) and len(line.split()) > len(t)]
    if not all(_USER_NAME.fullmatch(u) for u in users):
        return False
    if (path.name == "crontab" and path.parent.name == "etc") or path.parent.name == "cron.d" \
            or path.name == "cron.d" or path.name.endswith(".cron.d"):
        return True
    if any(_SYSTEM_HEADER.match(line.strip()) for line in lines):
        return True
    return bool(users) and all(u == "root" for u in users)


def read_user(path: Path, text: str) -> list[OldJob | Refusal]:
    return _Reader(path, system=False).read(text)


def read_system(path: Path, text: str) -> list[OldJob | Refusal]:
    return _Reader(path, system=True).read(text)


def parse_variable(text: str) -> tuple[str, str] | None:
    """(name, value) when `text` is a variable line as cron's env.c reads one; None when it is
    not one; Untranslatable when cron refuses it."""
    match = _VARIABLE.fullmatch(text)
    if match is None or _entry_tokens(text):
        return None
    name, value = match.groups()
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        if end < 0 or value[end + 1:].strip():
            raise Untranslatable(f"{name}: cron refuses a quoted value with no closing quote or "
                                 "text after it")
        return name, value[1:end].rstrip()
    if not value.strip():
        raise Untranslatable(f'{name}= has no value: Debian\'s cron refuses the line (write '
                             f'{name}="" for an empty one)')
    return name, value.rstrip()


@dataclass
class _Reader:
    path: Path
    system: bool
    variables: dict[str, str] = field(default_factory=dict)
    found: list[OldJob | Refusal] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)  # lines for which cron drops the file

    def read(self, text: str) -> list[OldJob | Refusal]:
        for number, physical in enumerate(text.split("\n"), start=1):
            self._line(number, *unmark(physical))
        if self.dropped:
            said = ", ".join(map(str, self.dropped))
            note = (f"Debian's cron ignores this whole file while line {said} is in it: this "
                    "job did not run there either")
            self.found = [replace(j, notes=(*j.notes, note)) if isinstance(j, OldJob) else j
                          for j in self.found]
        return self.found

    def _line(self, number: int, marker: str | None, body: str) -> None:
        stripped = body.strip()
        if not stripped:
            return
        if stripped.startswith("#"):
            # A comment; a commented job is kept (dormant) for `--irreversible`, a moved one is
            # read as its marker says.
            uncommented = stripped.lstrip("#").strip()
            if marker is not None or _entry_tokens(uncommented):
                self._add(number, uncommented, body, marker, dormant=marker is None)
            return
        if marker is None:
            try:
                variable = parse_variable(body)
            except Untranslatable as e:
                self._refused(Refusal(self.path, str(number), str(e), (number, number)), True)
                self.variables[body.split("=", 1)[0].strip()] = ""
                return
            if variable is not None:
                self.variables[variable[0]] = variable[1]
                return
        self._add(number, body, body, marker, dormant=False)

    def _add(self, number: int, text: str, legacy: str, marker: str | None,
             dormant: bool) -> None:
        found, drops = self._build(number, text, legacy, marker, dormant)
        if isinstance(found, OldJob):
            self.found.append(found)
        elif not dormant:  # a commented line that is no job is just a comment
            self._refused(found, drops)

    def _refused(self, refusal: Refusal, drops: bool) -> None:
        self.found.append(refusal)
        if drops:
            self.dropped.append(int(refusal.where))

    def _build(self, number: int, text: str, legacy: str, marker: str | None,
               dormant: bool) -> tuple[OldJob | Refusal, bool]:
        """The job of one line, or its refusal and whether cron drops the whole file for it."""

        def refused(reason: str, drops: bool = True) -> tuple[Refusal, bool]:
            return Refusal(self.path, str(number), reason, (number, number), marker,
                           legacy), drops

        fields = _entry_tokens(text)
        if fields is None:
            return refused("neither a variable (NAME=value) nor a job line (five time fields "
                           f"or an @word, then {'a user and ' if self.system else ''}a "
                           f"command): {text.strip()[:60]!r}")
        words = len(fields) + (1 if self.system else 0)
        head = re.match(r"[ \t]*(?:[^ \t]+[ \t]+){" + str(words) + "}", text)
        if head is None or not text[head.end():].strip():
            return refused("a job line with no command")
        try:
            schedule = cron.read_schedule(fields)
        except Untranslatable as e:
            return refused(str(e), drops="@reboot" not in str(e))
        user = text.split()[len(fields)] if self.system else self._owner()
        try:
            account = pwd.getpwnam(user)
        except KeyError:
            return refused(f"user {user!r} has no account on this machine: Debian's cron "
                           "skips the whole file while that is so")
        env = self._environment(account)
        try:
            command = cronline.read_command(text[head.end():], env)
        except Untranslatable as e:
            return refused(str(e), drops=False)
        zone = self.variables.get("CRON_TZ") or clock.host_zone()
        if not clock.valid_zone(zone):
            return refused(f"CRON_TZ={zone} names no time zone", drops=False)
        notes = [*command.notes, *self._notes(account, zone, schedule, command.shell)]
        keys = {**schedule.keys, "timezone": clock.canonical(zone)}
        step = OldCommand(command.argv, env["HOME"], command.env)
        return OldJob(self.path, str(number), legacy, keys, (step,), None, tuple(notes),
                      account.pw_name, command.name, (number, number), marker, dormant,
                      schedule.gap), False

    def _owner(self) -> str:
        """A user crontab's owner: the spool file's name, else the user running tickq."""
        if self.path.parent.name in ("crontabs", "cron") and self.path.parent.parent.name in (
                "cron", "spool"):
            return self.path.name
        return pwd.getpwuid(os.geteuid()).pw_name

    def _environment(self, account: pwd.struct_passwd) -> dict[str, str]:
        env = {"SHELL": "/bin/sh", "PATH": CRON_PATH, "HOME": account.pw_dir}
        env.update(self.variables)
        env["LOGNAME"] = account.pw_name  # cron sets it whatever the crontab says
        return env

    def _notes(self, account: pwd.struct_passwd, zone: str, schedule: cron.CronSchedule,
               shell: bool) -> list[str]:
        notes = []
        me = pwd.getpwuid(os.geteuid()).pw_name
        if account.pw_name != me:
            notes.append(f"cron ran it as {account.pw_name}; tickq runs it as the user of its "
                         f"dispatcher ({me} imported it), with that user's rights")
        if "CRON_TZ" in self.variables:
            notes.append(f"CRON_TZ={zone} is its zone, as cronie reads it; Debian's cron "
                         "ignores CRON_TZ and runs every line in the machine's zone")
        mail = self.variables.get("MAILTO")
        if mail:
            notes.append(f"cron mailed its output to {mail} (MAILTO); tickq keeps the output's "
                         "tail in its history and tells about failures through [settings] "
                         f'alert_command (e.g. ["mail", "-s", "tickq alert", "{mail}"]: the '
                         "alert arrives as JSON on its input) or alert_url, after alert_after "
                         "failures in a row")
        changed = clock.clock_note(schedule, zone)
        if changed:
            notes.append(changed)
        notes.append("env is cron's; tickq adds TICKQ_* and passes LANG, LC_*, TZ, USER and "
                     "TMPDIR from its own environment when set, where Debian's cron gives only "
                     "what /etc/environment and /etc/default/locale set"
                     + ("" if shell else ", and no shell sets PWD (nor bash's SHLVL and _): "
                        "tickq starts the program itself"))
        return notes
