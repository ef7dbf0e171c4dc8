"""How Debian's cron 3.0pl1 runs one line of a crontab, written out again apart from tickq's
code from what it was seen doing (see test_legacy_crontab.py): its environment, its reading of
`%`, and the programs, files and folders a line needs, so that a copy-on-write copy of the
machine (cron_sandbox.py) can run the old line and tickq's kind side by side."""

from __future__ import annotations

import os
import pwd
import re
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "data" / "legacy" / "cron"
NOT_PROGRAMS = frozenset((
    "sh", "bash", "dash", "cd", "test", "if", "then", "else", "fi", "export", "echo", "printf",
    "true", "false", "exec", "set", "do", "done", "while", "for", "in", "type", "f", "null",
))  # fmt: skip


def cron_variable(line: str) -> tuple[str, str] | None:
    """A crontab variable line as Debian's cron read the ones tried on it."""
    match = re.fullmatch(r"\s*([^\s=]+)\s*=\s*(.*)", line)
    if match is None or re.match(r"[\d*@#]", match.group(1)):
        return None
    name, value = match.groups()
    if value[:1] in ("'", '"') and value.rstrip().endswith(value[0]) and len(value.strip()) > 1:
        value = value.strip()[1:-1]
    return name, value.rstrip()


def cron_percent(command: str) -> tuple[str, str | None]:
    """do_command.c's reading of `%`, written out again: the command ends at the first
    unescaped %, whose rest (% as newlines, a newline added) is the input; \\% is %."""
    head, rest, escaped = [], None, False
    for i, ch in enumerate(command):
        if escaped:
            head[-1:] = ["%"] if ch == "%" else [head[-1], ch]
            escaped = False
        elif ch == "%":
            rest = command[i + 1:]
            break
        else:
            head.append(ch)
            escaped = ch == "\\"
    if not rest:
        return "".join(head), None
    data, escaped = [], False
    for ch in rest:
        if escaped and ch != "%":
            data.append("\\")
        if not escaped and ch == "%":
            ch = "\n"
        escaped = ch == "\\"
        if not escaped:
            data.append(ch)
    return "".join(head), "".join(data) + ("" if data and data[-1] == "\n" else "\n")


@dataclass
class OldRun:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdin: str | None
    command: str


def as_cron_runs_it(file: str, number: int) -> OldRun:
    lines = (CORPUS / file).read_bytes().decode().split("\n")  # CRLF kept, as cron keeps it
    variables = dict(v for line in lines[:number - 1] if (v := cron_variable(line)))
    words = lines[number - 1].split()
    fields = 1 if words[0].startswith("@") else 5
    system = file.startswith(("cron.d/", "etc/"))
    user = words[fields] if system else pwd.getpwuid(os.geteuid()).pw_name
    skip = fields + (1 if system else 0)
    command = re.sub(r"^\s*(?:\S+\s+){" + str(skip) + "}", "", lines[number - 1])
    account = pwd.getpwnam(user)
    env = {"SHELL": "/bin/sh", "HOME": account.pw_dir, "PATH": "/usr/bin:/bin", **variables,
           "LOGNAME": user}
    command, stdin = cron_percent(command)
    return OldRun([env["SHELL"], "-c", command], env, env["HOME"], stdin, command)


def shims_for(run: OldRun) -> tuple[set[str], set[str], set[str]]:
    """(the files to make recording shims of, the plain files and the folders to make) for one
    old line: every absolute path it runs and every word that could be a program (in the first
    folder of its PATH) is a shim; a path a test reads (`-f X`, `-x X`) a plain file, unless the
    line runs it too; a folder where the line needs one (`cd X`, `-d X`, a redirection's)."""
    home = run.env["HOME"]
    text = re.sub(r"\$\{?HOME\}?|(?<![\w/])~(?=/)", home, run.command)
    shims, files, dirs = set(), set(), {home}
    for target in re.findall(r"(?:\d*>>?|&>>?)\s*(/[^\s;&|)]+)", text):
        dirs.add(os.path.dirname(target))
    words = [w.rstrip("\r") for w in re.split(r"[\s;&|()<>'\"`]+", text) if w]
    first = run.env["PATH"].split(":")[0]
    for before, word in zip(["", *words], words, strict=False):
        if before in ("cd", "-d") and word.startswith("/"):
            dirs.add(word)
        elif before in ("-f", "-x", "-e", "-r", "-s") and word.startswith("/"):
            files.add(word)
        elif before == "cd":
            continue
        elif word.startswith("/") and "$" not in word and word != "/dev/null":
            shims.add(word)
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9._+-]*", word) and word not in NOT_PROGRAMS \
                and first.startswith("/"):
            shims.add(f"{first}/{word}")
    shims |= {f"{d}/{p}" for d, p in re.findall(r"\bcd\s+(/\S+)\s*&&\s*\./(\S+)", text)}
    shims -= dirs | {run.env["SHELL"], "/bin/sh", "/bin/bash"}
    return shims, files - shims - dirs, dirs
