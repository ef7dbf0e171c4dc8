"""Crontabs into tickq: each file recognised by its content and name, each job run the way cron
ran it, what cron itself refuses named in one line, never a traceback; the import's own rules
and the parity check of what it wrote (how a crontab is read: test_legacy_crontab.py)."""

from __future__ import annotations

import pwd
import re
import tomllib
from pathlib import Path

import pytest
from processes import tickq
from test_legacy_crontab import jobs

from tickq.legacy import cronline, importing


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
