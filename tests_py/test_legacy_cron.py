"""Crontabs into tickq: each file recognised by its content and name, each job run the way cron
ran it (`SHELL -c LINE` in the user's home folder with cron's environment, or a plain argv),
what cron itself refuses named in one line, never a traceback.

The rules of Debian's cron (3.0pl1-162) asserted here were seen running it: a crontab's
variable lines (quotes, spaces), the job's environment and folder, crontab(5)'s `%`, and which
lines make it drop a whole file (day of the month 0, `*/0`, `5/10`, an unknown user, `NAME=`)."""

from __future__ import annotations

import pwd
import re
import tomllib
from pathlib import Path

import pytest
from processes import tickq

from tickq.legacy import cron, cronline, crontab, importing, readers
from tickq.legacy.oldjob import OldJob, Refusal
from tickq.legacy.words import Untranslatable

ME = pwd.getpwuid(__import__("os").geteuid())


def jobs(text: str, name: str = "crontab", folder: str = "") -> list[OldJob | Refusal]:
    path = Path("/srv", folder, name) if folder else Path("/srv", name)
    return readers.read(path, text)


def one(text: str, **kw: str) -> OldJob:
    [job] = [j for j in jobs(text, **kw) if isinstance(j, OldJob)]
    return job


def imported(folder: Path, text: str, *args: str, name: str = "crontab"):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return tickq("legacy", "import", str(path), "--registry", str(folder / "registry.toml"),
                 *args, cwd=folder)


# ---------------------------------------------------------------- what crashed or went wrong


def test_reboot_midnight_percent_and_day_zero_are_named_and_the_rest_imported(
    tmp_path: Path,
) -> None:
    text = ("@reboot /usr/bin/warm-cache\n@midnight /usr/bin/rotate\n"
            "*/10 * * * * sleep $(( RANDOM % 600 )) && /usr/bin/poll\n"
            "0 0 0 * * /usr/bin/never\n")
    result = imported(tmp_path, text)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    path = tmp_path / "crontab"
    left = [line for line in result.stderr.splitlines() if "left as it is" in line]
    assert left == [
        f"{path}:1: left as it is: @reboot runs once when cron starts; tickq runs on a schedule "
        "only (run it from the machine's start-up instead)",
        f'{path}:4: left as it is: day of month "0" is not a number from 1 to 31 (cron refuses '
        "day 0)"]
    kinds = tomllib.loads(result.stdout)["kinds"]
    assert kinds["rotate"]["at"] == ["00:00"] and kinds["rotate"]["command"] == [
        "/usr/bin/rotate"]
    [poll] = [k for k in kinds.values() if "RANDOM" in k["legacy"]]
    # cron ran `sleep $(( RANDOM ` with " 600 )) && /usr/bin/poll\n" as its input: so does tickq.
    assert poll["command"] == ["/bin/sh", "-c", cronline.STDIN_WRAPPER, "/bin/sh",
                               " 600 )) && /usr/bin/poll\n", "sleep $(( RANDOM "]
    assert "ends the command at the first unescaped %" in result.stdout


def test_a_cron_d_user_field_is_the_user_never_the_program(tmp_path: Path) -> None:
    result = imported(tmp_path, "1 */12 * * * root /usr/bin/renew-certs -q renew\n",
                      name="cron.d/renew")
    assert result.returncode == 0, result.stderr
    [kind] = tomllib.loads(result.stdout)["kinds"].values()
    assert kind["command"] == ["/usr/bin/renew-certs", "-q", "renew"]
    assert kind["cwd"] == pwd.getpwnam("root").pw_dir
    assert kind["env"]["LOGNAME"] == "root"


def test_a_redirection_runs_through_the_shell_cron_used(tmp_path: Path) -> None:
    line = "cd /opt/app && ./sync.sh &>> /var/log/sync.log"
    result = imported(tmp_path, f"SHELL=/bin/bash\n*/5 * * * * {line}\n"
                      "0 * * * * /usr/bin/report >> /var/log/cron.log 2>&1\n")
    assert result.returncode == 0, result.stderr
    kinds = list(tomllib.loads(result.stdout)["kinds"].values())
    assert [k["command"] for k in kinds] == [
        ["/bin/bash", "-c", line],
        ["/bin/bash", "-c", "/usr/bin/report >> /var/log/cron.log 2>&1"]]
    assert "left as it is" not in result.stderr


def test_a_minute_list_stays_one_cron_string_with_a_timeout_that_fits(tmp_path: Path) -> None:
    minutes = ",".join(str(m) for m in range(0, 60, 5))
    result = imported(tmp_path, f"{minutes} * * * * /usr/bin/poll\n")
    [kind] = tomllib.loads(result.stdout)["kinds"].values()
    assert kind["cron"] == f"{minutes} * * * *" and "at" not in kind
    assert kind["timeout"] == "5m"
    assert "5m here: the shortest gap between two of its slots" in result.stdout


@pytest.mark.parametrize(("name", "text", "said"), [
    ("sanoid.timer", "[Unit]\nDescription=Sanoid Every 15 Minutes\n\n[Timer]\n"
     "OnCalendar=*:0/15\nPersistent=true\n", "sanoid.timer: left as it is: "),
    ("crontab", "[Unit]\nDescription=Sanoid Every 15 Minutes\n\n[Timer]\nOnCalendar=*:0/15\n",
     "crontab: left as it is: not a .timer unit"),
    ("backup.service", "[Service]\nType=oneshot\nExecStart=/usr/bin/backup\n",
     "backup.service: left as it is: a systemd service alone"),
    ("com.example.agent.plist", '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">'
     "<dict/></plist>\n", "com.example.agent.plist: left as it is: no Label"),
])
def test_units_and_plists_go_to_their_readers_never_read_as_crontabs(
    tmp_path: Path, name: str, text: str, said: str,
) -> None:
    """A timer given without its service, a unit-looking text named `crontab` (which import
    once read as a crontab: command = ["Sanoid", "Every", "15", "Minutes"]), a service alone
    and a plist without a Label: each is its reader's, and refused in one line."""
    result = imported(tmp_path, text, name=name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "" and "Sanoid" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if "left as it is" in line]
    assert line.startswith(f"{tmp_path / name}:") and said in line, line


def test_files_of_several_kinds_import_together_and_what_cannot_is_said(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("0 6 * * * /usr/bin/a\n")
    (tmp_path / "b.timer").write_text("[Timer]\nOnCalendar=daily\n")
    (tmp_path / "c").write_text("*/15 * * * * /usr/bin/c\n")
    (tmp_path / "d").write_bytes(b"\xff\xfe not text")
    result = tickq("legacy", "import", "a", "b.timer", "c", "d", "--registry", "r.toml",
                   cwd=tmp_path)
    assert result.returncode == 2, result.stderr  # d could not be read at all
    assert list(tomllib.loads(result.stdout)["kinds"]) == ["a", "c"]
    assert "b.timer:b.timer: left as it is: " in result.stderr
    assert "tickq: d: not UTF-8 text" in result.stderr


# ---------------------------------------------------------------- reading a crontab as cron does


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


# ---------------------------------------------------------------- the import's own rules


def test_importing_a_line_already_in_the_registry_says_so(tmp_path: Path, db_url: str) -> None:
    (tmp_path / "bin").mkdir()
    crontab_text = f"HOME={tmp_path}\n*/5 * * * * bin/x --a\n"
    first = imported(tmp_path, crontab_text, "--write", "--database-url", db_url)
    assert first.returncode == 0, first.stderr
    kinds = tomllib.loads((tmp_path / "registry.toml").read_text())["kinds"]
    (tmp_path / "crontab").write_text(crontab_text)  # the rollback: the line is back
    again = tickq("legacy", "import", "crontab", "--registry", "registry.toml", "--write",
                  "--database-url", db_url, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f'crontab:2: already in the registry as kind "{next(iter(kinds))}"' in again.stderr
    assert tomllib.loads((tmp_path / "registry.toml").read_text())["kinds"] == kinds
    assert (tmp_path / "crontab").read_text().split("\n")[1].startswith(
        f"#tickq:{next(iter(kinds))}# ")


def test_a_chain_of_crontab_lines_takes_their_one_schedule() -> None:
    text = ("30 6 * * 1-5 /usr/bin/a\n30 6 * * 1-5 /usr/bin/b\n0 * * * * /usr/bin/c\n")
    found = jobs(text)
    plan = importing.plan_import(found, importing.Options(chains=[importing.Chain("morning", 1,
                                                                                   2)]))
    kinds = tomllib.loads(plan.registry_text())["kinds"]
    assert (kinds["morning"]["at"], kinds["morning"]["on"]) == (
        ["06:30"], ["mon", "tue", "wed", "thu", "fri"])
    assert [s["command"] for s in kinds["morning"]["steps"]] == [["/usr/bin/a"], ["/usr/bin/b"]]
    assert kinds["c"]["cron"] == "0 * * * *"
    with pytest.raises(importing.ImportRefused, match="different schedules"):
        importing.plan_import(found, importing.Options(chains=[importing.Chain("m", 1, 3)]))


def test_timeouts_fit_the_cadence_and_never_pass_the_gap(tmp_path: Path) -> None:
    text = ("*/5 * * * * /usr/bin/send --due\n*/15 * * * * /usr/bin/pull\n"
            "0 6 * * * /usr/bin/report\n")
    kinds = tomllib.loads(imported(tmp_path, text).stdout)["kinds"]
    assert [k["timeout"] for k in kinds.values()] == ["5m", "15m", "1h"]
    told = imported(tmp_path, text, "--timeout", "10m")
    assert [k["timeout"] for k in tomllib.loads(told.stdout)["kinds"].values()] == [
        "5m", "10m", "10m"]
    assert "(--timeout 10m is longer)" in told.stdout


# ---------------------------------------------------------------- three files, one verdict


def test_the_shapes_that_crashed_import_and_pass_both_checks_unedited(
    tmp_path: Path, db_url: str,
) -> None:
    """`cd dir && ./x.sh &>> log`, a cron.d user field, a minute list, `@reboot` beside real
    lines and `$(( RANDOM % 600 ))`, in three files: imported with --write into a new registry,
    they pass one `legacy check` of the three and `tickq check`; taking the markers off gives
    the old files back byte for byte."""
    home, app = tmp_path / "home", tmp_path / "app"
    (app / "bin").mkdir(parents=True)
    home.mkdir()
    for name in ("start.sh", "sync.sh", "report.sh", "nightly.sh", "bin/poll"):
        (app / name).write_text("#!/bin/sh\necho ok\n")
        (app / name).chmod(0o755)
    files = {
        "crontab": (f"SHELL=/bin/bash\nHOME={home}\nMAILTO=ops@example.com\n"
                    f"@reboot cd {app} && ./start.sh &>> {home}/app.log\n"
                    f"*/10 * * * * cd {app} && ./sync.sh &>> {home}/app.log\n"
                    f"0,15,30,45 * * * * {app}/bin/poll --all\n"
                    f"17 6 * * 1-5 sleep $(( RANDOM % 600 )) && {app}/report.sh\n"),
        "cron.d/app": (f"HOME={home}\n# m h dom mon dow user command\n"
                       f"30 2 * * * root {app}/nightly.sh >> {home}/nightly.log 2>&1\n"),
        "other": f"HOME={home}\n@hourly {app}/bin/poll --quick\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    result = tickq("legacy", "import", *files, "--registry", "registry.toml", "--write",
                   "--database-url", db_url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if "left as it is" in line] == [
        "crontab:4: left as it is: @reboot runs once when cron starts; tickq runs on a "
        "schedule only (run it from the machine's start-up instead)"]
    registry = tomllib.loads((tmp_path / "registry.toml").read_text())
    assert registry["settings"]["tick"] == "1m"  # 06:17 needs it
    assert len(registry["kinds"]) == 5
    check = tickq("legacy", "check", *files, "--registry", "registry.toml", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "legacy parity holds: 5 kind(s)" in check.stdout
    capacity = tickq("check", "--registry", "registry.toml", "--database-url", db_url,
                     cwd=tmp_path)
    assert capacity.returncode == 0, capacity.stdout + capacity.stderr
    assert "fall between ticks" not in capacity.stderr
    for name, text in files.items():
        moved = (tmp_path / name).read_text()
        assert re.sub(r"(?m)^#tickq:[^#\s]+# ", "", moved) == text
    # The same files imported again add nothing: every job is there already (its markers).
    again = tickq("legacy", "import", *files, "--registry", "registry.toml", cwd=tmp_path)
    assert "no job to move" in again.stderr, again.stdout + again.stderr


def test_check_fails_when_a_crontab_job_runs_differently_than_its_kind(
    tmp_path: Path,
) -> None:
    (tmp_path / "x").write_text("#!/bin/sh\n")
    (tmp_path / "x").chmod(0o755)
    text = f"HOME={tmp_path}\nPATH=/usr/bin:/bin\n*/5 * * * * {tmp_path}/x >> log 2>&1\n"
    (tmp_path / "crontab").write_text(text)
    printed = tickq("legacy", "import", "crontab", "--registry", "r.toml", cwd=tmp_path)
    (tmp_path / "r.toml").write_text(printed.stdout)
    moved = "".join(f"#tickq:x# {line}\n" if line.startswith("*/5") else f"{line}\n"
                    for line in text.splitlines())
    (tmp_path / "crontab").write_text(moved)
    ok = tickq("legacy", "check", "crontab", "--registry", "r.toml", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The crontab's PATH changed since: the job would find other programs than the kind does.
    (tmp_path / "crontab").write_text(moved.replace("PATH=/usr/bin:/bin", "PATH=/opt/bin"))
    drifted = tickq("legacy", "check", "crontab", "--registry", "r.toml", cwd=tmp_path)
    assert drifted.returncode == 1
    assert 'FAIL kind "x": env differs from the old line\'s in PATH' in drifted.stdout


def test_a_kind_name_with_a_dot_is_one_kind_not_a_nested_table(tmp_path: Path) -> None:
    result = imported(tmp_path, "0 * * * * /usr/sbin/backup.daily --all >> /var/log/b.log\n")
    assert result.returncode == 0, result.stderr
    kinds = tomllib.loads(result.stdout)["kinds"]
    assert list(kinds) == ["backup.daily_all"] and "command" in kinds["backup.daily_all"]


def test_check_warns_about_a_slot_between_ticks_with_how_late(tmp_path: Path, db_url: str) -> None:
    """tick = "5m" ran a 06:17 line at 06:20 and nothing said so: `tickq check` says it (the
    rule is SQL's, tickq.tick_lateness), with the tick that keeps every slot on time."""
    (tmp_path / "registry.toml").write_text(
        '[settings]\ntick = "5m"\ntimezone = "Europe/London"\n\n'
        '[kinds.report]\ncommand = ["/bin/true"]\nat = ["06:17"]\ntimeout = "1m"\n')
    result = tickq("check", "--registry", "registry.toml", "--database-url", db_url,
                   cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ('kind "report", key "at": its slots fall between ticks: 06:17 (Europe/London) '
            'runs at 06:20, 3m late with tick = "5m"; tick = "1m" keeps every slot on time'
            in result.stderr), result.stderr
