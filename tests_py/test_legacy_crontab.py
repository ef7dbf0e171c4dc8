"""A crontab read as Debian's cron reads it: each job run the way cron ran it (`SHELL -c LINE`
in the user's home folder with cron's environment, or a plain argv), what cron itself refuses
named in one line.

The rules of Debian's cron (3.0pl1-162) asserted here were seen running it: a crontab's
variable lines (quotes, spaces), the job's environment and folder, crontab(5)'s `%`, and which
lines make it drop a whole file (day of the month 0, `*/0`, `5/10`, an unknown user, `NAME=`)."""

from __future__ import annotations

import pwd
import re
from pathlib import Path

import pytest

from tickq.legacy import cron, cronline, crontab, readers
from tickq.legacy.oldjob import OldJob, Refusal
from tickq.legacy.words import Untranslatable

ME = pwd.getpwuid(__import__("os").geteuid())


def jobs(text: str, name: str = "crontab", folder: str = "") -> list[OldJob | Refusal]:
    path = Path("/srv", folder, name) if folder else Path("/srv", name)
    return readers.read(path, text)


def one(text: str, **kw: str) -> OldJob:
    [job] = [j for j in jobs(text, **kw) if isinstance(j, OldJob)]
    return job


@pytest.mark.parametrize(("line", "name", "value"), [
    ("A= ' spaced ' ", "A", " spaced"),  # quotes off, then trailing blanks
    ("B=a # not comment", "B", "a # not comment"),
    ('D = "x y" ', "D", "x y"),
    ("  F=f", "F", "f"),
    ('K="a=b"', "K", "a=b"),
    ("L==x", "L", "=x"),
    ("M\t=\ttab\t", "M", "tab"),
    ("N='x\"y'", "N", 'x"y'),
    ("O= a  b  ", "O", "a  b"),
    ('MAILTO=""', "MAILTO", ""),
])
def test_variable_lines_read_as_debian_cron_reads_them(line: str, name: str, value: str) -> None:
    assert crontab.parse_variable(line) == (name, value)


@pytest.mark.parametrize("line", ['C="double"x', "H=\"unterminated", "G=", "MAILTO="])
def test_variable_lines_cron_refuses_are_refused(line: str) -> None:
    with pytest.raises(Untranslatable):
        crontab.parse_variable(line)


def test_a_job_gets_crons_environment_and_runs_in_the_home_folder() -> None:
    job = one("FOO = bar baz  \nLOGNAME=someone\nHOME=/srv/home\n* * * * * /usr/bin/env\n")
    [step] = job.steps
    assert dict(step.env) == {"SHELL": "/bin/sh", "PATH": "/usr/bin:/bin", "HOME": "/srv/home",
                              "FOO": "bar baz", "LOGNAME": ME.pw_name}
    assert step.cwd == "/srv/home" and step.argv == ("/usr/bin/env",)
    # Variables apply to the lines below them only.
    first, second = [j for j in jobs("* * * * * /usr/bin/a\nX=1\n* * * * * /usr/bin/b\n")
                     if isinstance(j, OldJob)]
    assert "X" not in first.steps[0].env and second.steps[0].env["X"] == "1"


@pytest.mark.parametrize(("text", "command", "stdin"), [
    # Seen from Debian's cron: the first unescaped % ends the command; \% is a %.
    ("cat > f %line1%line2\\%x%", "cat > f ", "line1\nline2%x\n"),
    ("cat > f %abc%def", "cat > f ", "abc\ndef\n"),
    ("cat > f %a\\\\%b\\x%c", "cat > f ", "a\\%b\\x\nc\n"),
    ("printf '\\%s\\n' \"a\\%b\" > f", "printf '%s\\n' \"a%b\" > f", None),
    ("date +\\%Y-\\%m-\\%d", "date +%Y-%m-%d", None),
    ("x\\\\%y", "x\\\\", "y\n"),
    ("x%", "x", None),
])
def test_percent_signs_as_crontab_5_says(text: str, command: str, stdin: str | None) -> None:
    assert cronline.split_percent(text) == (command, stdin)


@pytest.mark.parametrize(("fields", "keys", "gap"), [
    ("30 6 * * 1-5", {"at": ["06:30"], "on": ["mon", "tue", "wed", "thu", "fri"]}, 86400),
    ("0 9 * * 0,6", {"at": ["09:00"], "on": ["sat", "sun"]}, 86400),
    ("@daily", {"at": ["00:00"]}, 86400),
    ("@midnight", {"at": ["00:00"]}, 86400),
    ("@weekly", {"at": ["00:00"], "on": ["sun"]}, 86400),
    ("@hourly", {"cron": "@hourly"}, 3600),
    ("@monthly", {"cron": "@monthly"}, 86400),
    ("@yearly", {"cron": "@yearly"}, 86400),
    ("@annually", {"cron": "@annually"}, 86400),
    ("*/5 * * * *", {"cron": "*/5 * * * *"}, 300),
    ("*/7 * * * *", {"cron": "*/7 * * * *"}, 240),  # :56 then :00
    ("0 6,18 * * sun", {"cron": "0 6,18 * * sun"}, 43200),
    ("15 */8 * * *", {"cron": "15 */8 * * *"}, 28800),
    ("0 0 1 * *", {"cron": "0 0 1 * *"}, 86400),
    ("30 4 1,15 Jan,jul *", {"cron": "30 4 1,15 Jan,jul *"}, 86400),
    ("0 0 13 * FRI", {"cron": "0 0 13 * FRI"}, 86400),
    ("*/5 7-21 * * *", {"cron": "*/5 7-21 * * *"}, 300),
    ("0 0 * * 7", {"at": ["00:00"], "on": ["sun"]}, 86400),
])
def test_schedules_become_at_or_stay_cron_strings(fields: str, keys: dict, gap: int) -> None:
    schedule = cron.read_schedule(fields.split())
    assert (schedule.keys, schedule.gap) == (keys, gap)


@pytest.mark.parametrize(("fields", "reason"), [
    ("@reboot", "@reboot runs once when cron starts"),
    ("@every", "no schedule cron knows"),
    ("0 24 * * *", 'hour "24" is not a number from 0 to 23'),
    ("0 0 0 * *", "cron refuses day 0"),
    ("0 0 32 * *", "not a number from 1 to 31"),
    ("0 0 * 0 *", 'month "0" is not a number from 1 to 12'),
    ("0 0 * 13 *", "not a number from 1 to 12"),
    ("*/0 * * * *", 'step "0" is not a number above 0'),
    ("5/10 * * * *", "cron takes a step only after * or a range"),
    ("5-1 * * * *", "runs backwards"),
])
def test_schedules_cron_refuses_say_why(fields: str, reason: str) -> None:
    with pytest.raises(Untranslatable, match=re.escape(reason)):
        cron.read_schedule(fields.split())


def test_a_refused_line_says_cron_dropped_the_whole_file() -> None:
    found = jobs("* * * * * /usr/bin/a\n0 0 0 * * /usr/bin/b\n")
    job, refusal = found
    assert isinstance(refusal, Refusal) and refusal.where == "2" and refusal.lines == (2, 2)
    assert any("ignores this whole file while line 2" in n for n in job.notes)
    # @reboot is no error to cron: it drops nothing.
    job, _ = jobs("* * * * * /usr/bin/a\n@reboot /usr/bin/b\n")
    assert not any("whole file" in n for n in job.notes)


@pytest.mark.parametrize(("name", "folder", "text", "system"), [
    ("crontab", "etc", "17 * * * * root cd / && run-parts --report /etc/cron.hourly\n", True),
    ("certs", "cron.d", "0 4 * * * www-data /usr/bin/php /srv/cron.php\n", True),
    ("cron.d", "debian", "0 4 * * * root /usr/bin/x\n", True),
    ("jobs", "", "# m h dom mon dow user  command\n0 4 * * * nobody /usr/bin/x\n", True),
    ("jobs", "", "0 4 * * * root /usr/bin/x\n*/5 * * * * root /usr/bin/y\n", True),
    ("jobs", "", "0 4 * * * /usr/bin/x\n", False),
    ("crontab", "", "# m h  dom mon dow   command\n0 4 * * * /usr/bin/x\n", False),
])
def test_a_user_field_is_read_where_the_file_has_one(name: str, folder: str, text: str,
                                                     system: bool) -> None:
    path = Path("/srv", folder, name)
    assert readers.kind_of(path, text).what == ("a system crontab" if system else "a crontab")


def test_an_unknown_user_is_refused_and_another_user_named_in_a_note() -> None:
    [refusal] = jobs("0 4 * * * no-such-user-here /usr/bin/x\n", folder="cron.d")
    assert "user 'no-such-user-here' has no account on this machine" in refusal.reason
    job = one("0 4 * * * nobody /usr/bin/x\n", folder="cron.d")
    assert job.user == "nobody" and job.steps[0].env["LOGNAME"] == "nobody"
    if ME.pw_name != "nobody":
        assert any("cron ran it as nobody; tickq runs it as" in n for n in job.notes)


def test_mailto_cron_tz_and_shell_are_honoured_with_notes() -> None:
    job = one("MAILTO=ops@example.com\nCRON_TZ=Europe/Paris\nSHELL=/bin/bash\n"
              "30 1 * * * /usr/bin/x > /dev/null\n")
    assert job.schedule == {"at": ["01:30"], "timezone": "Europe/Paris"}
    assert job.steps[0].argv == ("/bin/bash", "-c", "/usr/bin/x > /dev/null")
    assert job.steps[0].env["MAILTO"] == "ops@example.com"
    said = "\n".join(job.notes)
    assert 'alert_command (e.g. ["mail", "-s", "tickq alert", "ops@example.com"]' in said
    assert "CRON_TZ=Europe/Paris is its zone" in said
    # 01:30 is skipped in Paris's spring-forward gap? No: Paris changes at 02:00-03:00.
    assert "clock changes" not in said
    late = one("CRON_TZ=Europe/Paris\n30 2 * * * /usr/bin/x\n")
    assert "clock changes in Europe/Paris: a time the spring-forward gap skips runs one gap " \
           "later in tickq, right after the change in Debian's cron" in "\n".join(late.notes)


def test_a_plain_argv_stays_an_argv_and_anything_else_goes_through_the_shell() -> None:
    env = {"SHELL": "/bin/sh"}
    assert cronline.read_command("/usr/bin/x 'a b' c\\ d", env).argv == (
        "/usr/bin/x", "a b", "c d")
    plain = cronline.read_command("LANG=C /usr/bin/x", env)
    assert (plain.argv, plain.env["LANG"], plain.shell) == (("/usr/bin/x",), "C", False)
    for line in ("x > out", "x && y", "x $HOME", "~/bin/x", "./x", "bin/x", "cd /tmp",
                 "x | y", "[ -x /usr/bin/x ] && x", "x ''", "x *.log"):
        assert cronline.read_command(line, env).argv == ("/bin/sh", "-c", line), line
    with pytest.raises(Untranslatable, match="SHELL=bash is not an absolute path"):
        cronline.read_command("x", {"SHELL": "bash"})
