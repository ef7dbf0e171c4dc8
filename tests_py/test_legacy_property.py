"""Any old file, however broken, gets answers and never a traceback: `legacy import` and `legacy
check` fed arbitrary text (crontab-shaped and not), arbitrary bytes and a byte-order mark exit 0,
1 or 2, say every refusal in one line naming the file (and the line, for a line), and print only
TOML a registry takes. In process, through the commands' own functions and the exit map
tickq.cli.main uses, so a few hundred files cost seconds."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import tempfile
import tomllib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tickq.cli import legacy, legacy_import
from tickq.db.errors import exit_of

FRAGMENTS = [
    "*/5 * * * *", "0 0 0 * *", "@reboot", "@midnight", "@hourly", "@every", "61 * * * *",
    "5/10 * * * *", "0,5,10 7-21 * * mon-fri", "root", "nobody", "no-such-user", "/bin/echo",
    "cd /tmp &&", ">> log 2>&1", "&>> log", "% a %", "\\%", "$(( RANDOM % 600 ))", "'", '"',
    "\\", "SHELL=/bin/bash", "SHELL=bash", "MAILTO=", 'MAILTO=""', "CRON_TZ=Nowhere/City",
    "CRON_TZ=Europe/Paris", "HOME=relative", "#tickq:k# ", "#tickq:k/s# ", "# ", "#!", "\t",
    "\r", "\x00", "[Timer]", "[Unit]", "OnCalendar=daily", "<?xml", "<plist>", "a:b:c", "=",
    "x" * 300, "é", "\u2028", "\ufeff",
]
NAMES = ["crontab", "cron.d/job", "etc/crontab", "backup.timer", "agent.plist", "old.sh", "x"]

line = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=8).map(
    " ".join)
texts = st.one_of(st.lists(line, max_size=8).map("\n".join), st.text(max_size=200))
contents = st.one_of(
    texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
    texts.map(lambda t: b"\xef\xbb\xbf" + t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
)


def run(command, args: argparse.Namespace) -> tuple[int, str, str]:
    """A command run as tickq.cli.main runs it: an exception the exit map does not know is a
    traceback, and fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = command(args)
        except Exception as exc:  # noqa: BLE001 - mapped exactly as main() maps it
            ended = exit_of(exc)
            if ended is None:
                raise
            status, lines = ended
            for said in lines:
                print(f"tickq: {said}", file=err)
    return status, out.getvalue(), err.getvalue()


def import_args(path: Path, registry: Path) -> argparse.Namespace:
    return argparse.Namespace(files=[str(path)], registry=str(registry), write=False, chain=[],
                              irreversible=[], every=3600, timeout=None, database_url=None)


def lines_say_where(err: str, path: Path) -> None:
    for said in err.splitlines():
        if "left as it is" in said:
            # a line (12, 3-4) of a crontab or script; a unit's or a plist's name
            assert re.match(rf"^{re.escape(str(path))}:[^:\s]+: left as it is: \S", said), said
        elif said.startswith("tickq: "):
            assert str(path) in said or "registry" in said, said
        assert "a bug in tickq" not in said, said


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), data=contents)
def test_import_answers_any_file_in_lines_never_a_traceback(name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        status, out, err = run(legacy_import.cmd_import, import_args(path, Path(folder, "r.toml")))
        assert status in (0, 2), (status, err)
        lines_say_where(err, path)
        if out:
            tomllib.loads(out)  # what import prints is a registry's TOML


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), data=contents)
def test_check_answers_any_file_with_one_verdict(name: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        registry = Path(folder, "r.toml")
        registry.write_text('[kinds.k]\ncommand = ["/bin/true"]\nevery = "1h"\ntimeout = "1m"\n'
                            'legacy = "*/5 * * * * /bin/echo"\n')
        args = argparse.Namespace(files=[str(path)], registry=str(registry), database_url=None)
        status, out, err = run(legacy.cmd_check, args)
        assert status in (0, 1, 2), (status, out, err)
        lines_say_where(err, path)
        assert ("legacy parity holds" in out) == (status == 0)
