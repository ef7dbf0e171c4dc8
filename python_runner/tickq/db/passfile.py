"""Why libpq found no password: the line tickq's connection needed from the passfile, and where
it looked, in words a user can act on. libpq says only "fe_sendauth: no password supplied".

libpq takes a password from the URL, else PGPASSWORD, else the passfile: the URL's `passfile`,
else PGPASSFILE, else ~/.pgpass. A line there is host:port:database:user:password (`*` matches
anything, `\\:` and `\\\\` escape), matched against the host as written (`localhost` for no
host or a Unix socket), the port, the database and the user of the connection; the first line
that matches gives the password. A passfile others may read is ignored. Nothing here ever
reads a password field into a message.
"""

from __future__ import annotations

import stat
from pathlib import Path

import psycopg
from psycopg import conninfo

FIELDS = ("host", "port", "database", "user")


def explain(url: str) -> str:
    """One line: for which host, port, database and user no password was found, where tickq
    looked, and what of the passfile came closest (never a password)."""
    wanted = _wanted(url)
    where, source = _passfile(url)
    lines = ", or ".join(
        f"host {h}, port {p}, database {wanted['database']}, user {wanted['user']}"
        for h, p in _pairs(wanted))
    if not where.exists():
        return f"no password found for {lines}: no passfile at {where} ({source})"
    found = f"no password found for {lines} in {where} ({source})"
    problem = _file_problem(where)
    if problem:
        return f"{found}: {problem}"
    near = _nearest(where, wanted)
    hint = ("a line is host:port:database:user:password, * matching anything; the host is "
            "matched as the URL writes it")
    return f"{found}: {near}; {hint}" if near else f"{found}; {hint}"


def _wanted(url: str) -> dict[str, str]:
    """host, port, database and user as libpq uses them: the URL's, else its defaults (the
    PG* variables, the OS user)."""
    given = {k: str(v) for k, v in conninfo.conninfo_to_dict(url).items() if v}
    defaults = {o.keyword.decode(): o.val.decode() for o in psycopg.pq.Conninfo.get_defaults()
                if o.val is not None}
    merged = {**defaults, **given}
    user = merged.get("user", "")
    return {"host": merged.get("host", ""), "port": merged.get("port", "5432"),
            "database": merged.get("dbname") or user, "user": user}


def _pairs(wanted: dict[str, str]) -> list[tuple[str, str]]:
    """Each host with its port (one port for all, or one each), as the passfile names it."""
    hosts = wanted["host"].split(",")
    ports = wanted["port"].split(",")
    ports = ports * len(hosts) if len(ports) == 1 else ports
    return [(h or "localhost", p or "5432") for h, p in zip(hosts, ports, strict=False)]


def _passfile(url: str) -> tuple[Path, str]:
    """The passfile libpq reads for `url`, and what named it."""
    given = conninfo.conninfo_to_dict(url).get("passfile")
    if given:
        return Path(str(given)).expanduser(), "the URL's passfile"
    named = next((o.val.decode() for o in psycopg.pq.Conninfo.get_defaults()
                  if o.keyword == b"passfile" and o.val), None)
    if named:
        return Path(named).expanduser(), "PGPASSFILE"
    return Path("~/.pgpass").expanduser(), "~/.pgpass; PGPASSFILE names another"


def _file_problem(path: Path) -> str | None:
    """Why libpq does not read `path` at all, or None."""
    try:
        info = path.stat()
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file, which libpq ignores"
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return (f"libpq ignores it: mode {mode:04o} lets others read it (chmod 600 {path})")
    return None


def _nearest(path: Path, wanted: dict[str, str]) -> str | None:
    """The lines that differ from what was wanted in one field only, named by that field."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    near = []
    for host, port in _pairs(wanted):
        want = (host, port, wanted["database"], wanted["user"])
        for fields in _lines(text):
            missed = [i for i, (have, need) in enumerate(zip(fields, want, strict=True))
                      if have not in ("*", need)]
            if len(missed) == 1:
                i = missed[0]
                near.append(f"a line of it differs only in the {FIELDS[i]} "
                            f"({fields[i]} there, {want[i]} here)")
    return "; ".join(dict.fromkeys(near)) or None


def _lines(text: str) -> list[tuple[str, str, str, str]]:
    """The host, port, database and user of each line of a passfile (its password dropped)."""
    found = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = _split(line)
        if len(fields) >= 5:
            found.append((fields[0], fields[1], fields[2], fields[3]))
    return found


def _split(line: str) -> list[str]:
    """A passfile line's fields: `:` separates, a backslash escapes the next character."""
    fields, current, escaped = [], [], False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":" and len(fields) < 4:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    return [*fields, "".join(current)]
