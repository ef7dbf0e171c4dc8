"""A systemd timer with its service, read into the job tickq imports (tickq.legacy.systemd):
the expected argv, cwd and environment are written by hand from systemd.service(5) "Command
lines", systemd.syntax(7) "Quoting", systemd.unit(5) "Specifiers" and systemd.exec(5), as an
independent check of the reader; the timer side from systemd.timer(5)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickq.legacy import systemd
from tickq.legacy.oldjob import OldJob, Refusal
from tickq.legacy.systemd import read_timer_unit
from tickq.legacy.systemd_env import SYSTEM_PATH, env_file
from tickq.legacy.unitfile import read_unit, timespan

ZONE = "Europe/Berlin"


def unit_pair(tmp_path: Path, service: str, timer: str = "[Timer]\nOnCalendar=daily\n",
              name: str = "job") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / f"{name}.service").write_text(textwrap.dedent(service))
    path = tmp_path / f"{name}.timer"
    path.write_text(textwrap.dedent(timer))
    return path


def job(path: Path, **kw) -> OldJob:
    [found] = read_timer_unit(path, ZONE, **kw)
    assert isinstance(found, OldJob), found
    return found


def refusal(path: Path) -> str:
    [found] = read_timer_unit(path, ZONE)
    assert isinstance(found, Refusal), found
    assert "\n" not in found.line() and found.line().startswith(f"{path}:{path.name}: ")
    return found.reason


def argvs(j: OldJob) -> list[tuple[str, ...]]:
    return [s.argv for s in j.steps]


def test_the_manuals_first_expansion_example(tmp_path):
    """systemd.service(5): "This will execute /bin/echo with four arguments: "one", "two",
    "two", and "two two"." (echo is a bare name: found on systemd's fixed PATH)."""
    j = job(unit_pair(tmp_path, """\
        [Service]
        Environment="ONE=one" 'TWO=two two'
        ExecStart=echo $ONE $TWO ${TWO}
        """))
    assert argvs(j) == [("echo", "one", "two", "two", "two two")]
    assert j.steps[0].env == {"PATH": SYSTEM_PATH, "ONE": "one", "TWO": "two two"}
    assert j.steps[0].cwd == "/"  # the system manager's default


def test_the_manuals_second_expansion_example_as_systemd_really_runs_it(tmp_path):
    """The manual's second example says ${ONE} gives "'one'"; systemd removes those quotes
    (systemd/systemd#42442, fixed by #42753): "one". The rest is as the manual says."""
    j = job(unit_pair(tmp_path, """\
        [Service]
        Type=oneshot
        Environment=ONE='one' "TWO='two two' too" THREE=
        ExecStart=/bin/echo ${ONE} ${TWO} ${THREE}
        ExecStart=/bin/echo $ONE $TWO $THREE
        """))
    assert argvs(j) == [("/bin/echo", "one", "'two two' too", ""),
                        ("/bin/echo", "one", "two two", "too")]
    assert [s.name for s in j.steps] == ["start", "start_2"]


def test_semicolons_split_command_lines_and_shell_syntax_is_plain_words(tmp_path):
    """The manual: `echo one ; echo "two two"` runs echo twice; `echo / >/dev/null & \\; ls`
    runs echo once with five arguments."""
    j = job(unit_pair(tmp_path, """\
        [Service]
        Type=oneshot
        ExecStart=echo one ; echo "two two"
        ExecStartPost=echo / >/dev/null & \\; \\
          ls
        """))
    assert argvs(j) == [("echo", "one"), ("echo", "two two"),
                        ("echo", "/", ">/dev/null", "&", ";", "ls")]


def test_quotes_escapes_dollars_and_specifiers(tmp_path):
    j = job(unit_pair(tmp_path, r"""
        [Service]
        Type=oneshot
        ExecStart=/usr/bin/prog "a b"c 'd\te' \x41\101 \s$$HOME ${UNSET}x %n %N %p %i %% %h
        ExecStart=:/usr/bin/prog $$HOME ${X} $X
        ExecStart=-/usr/bin/prog a\d
        """, name="nightly"))
    assert argvs(j) == [
        ("/usr/bin/prog", "a bc", "d\te", "AA", " $HOME", "x", "nightly.service", "nightly",
         "nightly", "", "%", "/root"),
        ("/usr/bin/prog", "$$HOME", "${X}", "$X"),  # ":" turns expansion off
        ("/usr/bin/prog", "a\\d"),  # an unknown escape is kept (systemd warns)
    ]
    assert [s.ignore_failure for s in j.steps] == [False, False, True]
    assert any("${UNSET}" not in n and "$UNSET expanded to nothing" in n for n in j.notes)


def test_a_dollar_word_that_is_no_name_or_unset_vanishes(tmp_path):
    """"$FOO" as a word of its own is split; unset, or not a name ("$FOO/bar"), it is no
    argument at all."""
    j = job(unit_pair(tmp_path, """\
        [Service]
        Environment=OPTS="-v --level 3" EMPTY=
        ExecStart=/usr/bin/prog $OPTS $EMPTY $NOPE $OPTS/x "${OPTS}"
        """))
    assert argvs(j) == [("/usr/bin/prog", "-v", "--level", "3", "-v --level 3")]


def test_a_template_instance_resolves_its_specifiers(tmp_path):
    (tmp_path / "db-backup@.service").write_text(textwrap.dedent("""\
        [Service]
        Type=oneshot
        ExecStart=/usr/local/bin/backup %n %p %i %I %f %j
        """))
    timer = tmp_path / "db-backup@srv-data.timer"
    timer.write_text("[Timer]\nOnCalendar=daily\n")
    j = job(timer)
    assert argvs(j) == [("/usr/local/bin/backup", "db-backup@srv-data.service", "db-backup",
                         "srv-data", "srv/data", "/srv/data", "backup")]
    template = _timer(tmp_path, "db-backup@.timer", "[Timer]\nOnCalendar=daily\n")
    assert refusal(template).startswith("a template")


def _timer(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_environment_files_are_read_when_there_and_named_when_not(tmp_path):
    root = tmp_path / "host"
    (root / "etc/default").mkdir(parents=True)
    (root / "etc/default/job").write_text('A="x y"\n# c\nB=2\n')
    j = job(unit_pair(tmp_path, """\
        [Service]
        Environment=A=1 C=3
        EnvironmentFile=/etc/default/job
        EnvironmentFile=-/etc/default/missing
        ExecStart=/usr/bin/prog ${A} $B $C
        """), root=root)
    assert argvs(j) == [("/usr/bin/prog", "x y", "2", "3")]
    assert j.steps[0].env == {"PATH": SYSTEM_PATH, "A": "x y", "B": "2", "C": "3"}
    assert any("EnvironmentFile=/etc/default/job: A, B copied" in n for n in j.notes)
    assert any("/etc/default/missing is not here" in n for n in j.notes)


def test_env_file_syntax_as_systemd_exec_describes_it():
    text = ("# comment\n; other\nA=plain value  \nB=\"dq \\\"x\\\" \\$y \\n\"\nC='sq \\n'\n"
            "D=a\"b\"\nE= 'a' \"b\" \nF=line\\\ncontinued\nNOEQUALS\n 1BAD=x\nG=\"multi\nline\"\n")
    assert env_file(text) == {"A": "plain value", "B": 'dq "x" $y \\n', "C": "sq \\n",
                              "D": 'a"b"', "E": "ab", "F": "linecontinued", "G": "multi\nline"}


def test_working_directory_user_and_timeouts(tmp_path):
    j = job(unit_pair(tmp_path, """\
        [Service]
        Type=oneshot
        User=root
        WorkingDirectory=~
        TimeoutStartSec=1h 30min
        ExecStart=/usr/bin/prog
        """))
    assert j.steps[0].cwd == "/root" and j.user == "root" and j.timeout == 5400
    simple = job(unit_pair(tmp_path, """\
        [Service]
        WorkingDirectory=-/srv/app
        TimeoutStartSec=10
        RuntimeMaxSec=infinity
        ExecStart=/usr/bin/prog
        """))
    assert simple.steps[0].cwd == "/srv/app" and simple.timeout is None


def test_unit_file_syntax_continuations_comments_resets():
    text = ("\ufeff[Section A]\nKeyOne=value 1\n\n# a comment\n[Section C]\nKeyThree=value 3\\\n"
            "# this line is ignored\n; this line is ignored too\n       value 3 continued\n"
            "List=a\nList=\nList=b\n")
    assert [(a.section, a.key, a.value) for a in read_unit(text)] == [
        ("Section A", "KeyOne", "value 1"),
        ("Section C", "KeyThree", "value 3        value 3 continued"),
        ("Section C", "List", "a"), ("Section C", "List", ""), ("Section C", "List", "b")]
    assert timespan("5min 20s") == 320 and timespan("1.5h") == 5400 and timespan("90") == 90
    assert timespan("infinity") is None


def test_exec_start_resets_and_empty_assignments(tmp_path):
    j = job(unit_pair(tmp_path, """\
        [Service]
        Type=oneshot
        ExecStart=/bin/first
        ExecStart=
        ExecStart=/bin/second
        """))
    assert argvs(j) == [("/bin/second",)]


@pytest.mark.parametrize(("service", "why"), [
    ("[Service]\nExecStart=/bin/a\nExecStart=/bin/b\n", "only Type=oneshot"),
    ("[Service]\nType=oneshot\nExecStart=/bin/a\nExecStopPost=/bin/b\n", "ExecStopPost="),
    ("[Service]\nExecCondition=/bin/a\nExecStart=/bin/b\n", "ExecCondition="),
    ("[Service]\nExecStart=@/bin/busybox sh -c x\n", "argv[0]"),
    ("[Service]\nExecStart=/bin/a 'unbalanced\n", "unbalanced quoting"),
    ("[Service]\nExecStart=bin/a\n", "neither an absolute path"),
    ("[Service]\nExecStart=/bin/a %H\n", "%H"),
    ("[Service]\nRootDirectory=/srv/jail\nExecStart=/bin/a\n", "own root folder"),
    ("[Service]\nType=oneshot\n", "no command"),
])
def test_what_a_kind_cannot_run_is_refused_in_one_line(tmp_path, service, why):
    assert why in refusal(unit_pair(tmp_path, service))


@pytest.mark.parametrize(("timer", "keys", "note"), [
    ("[Timer]\nOnBootSec=15min\nOnUnitActiveSec=1h\n", {"every": "1h"}, "OnBootSec=15m dropped"),
    ("[Timer]\nOnUnitInactiveSec=30min\n", {"every": "30m"}, "after its service's last run"),
    ("[Timer]\nOnCalendar=daily\nPersistent=true\n", {"at": "00:00", "timezone": ZONE}, ""),
    ("[Timer]\nOnCalendar=daily\n", {"at": "00:00", "timezone": ZONE, "catch_up": "1h"},
     "Persistent=false"),
    ("[Timer]\nOnCalendar=hourly\n", {"cron": "0 * * * *", "timezone": ZONE}, ""),
    ("[Timer]\nOnCalendar=daily\nOnCalendar=\nOnCalendar=*-*-* 06:00\nPersistent=yes\n",
     {"at": "06:00", "timezone": ZONE}, ""),
    ("[Timer]\nOnCalendar=Mon 06:00\nOnCalendar=Tue 06:00\nPersistent=yes\n",
     {"at": "06:00", "on": ["mon", "tue"], "timezone": ZONE}, ""),
])
def test_timer_sections(tmp_path, timer, keys, note):
    j = job(unit_pair(tmp_path, "[Service]\nExecStart=/bin/a\n", timer))
    assert j.schedule == keys
    assert not note or any(note in n for n in j.notes), j.notes


def test_a_random_delay_is_a_fixed_offset_chosen_from_the_name(tmp_path):
    timer = "[Timer]\nOnCalendar=*:0/15\nRandomizedDelaySec=10min\n"
    a = job(unit_pair(tmp_path / "a", "[Service]\nExecStart=/bin/a\n", timer, "one"))
    b = job(unit_pair(tmp_path / "a", "[Service]\nExecStart=/bin/a\n", timer, "one"))
    c = job(unit_pair(tmp_path / "c", "[Service]\nExecStart=/bin/a\n", timer, "other"))
    assert a.schedule == b.schedule and a.schedule["every"] == "15m"
    assert a.schedule.get("offset") != c.schedule.get("offset")
    assert any("fixed offset" in n for n in a.notes)


@pytest.mark.parametrize(("timer", "why"), [
    ("[Timer]\nOnBootSec=5min\n", "fires only once"),
    ("[Timer]\nAccuracySec=1h\n", "no trigger"),
    ("[Timer]\nOnCalendar=daily\nOnUnitActiveSec=1h\n", "both on a calendar"),
    ("[Timer]\nOnCalendar=*-*-* 12:00:30\n", "of a minute"),
    ("[Timer]\nOnCalendar=daily\nUnit=other.target\n", "not a service"),
    ("[Timer]\nOnCalendar=daily\nUnit=missing.service\n", "not beside it"),
])
def test_timers_tickq_cannot_schedule_are_refused(tmp_path, timer, why):
    assert why in refusal(unit_pair(tmp_path, "[Service]\nExecStart=/bin/a\n", timer))


def test_drop_ins_override_the_unit(tmp_path):
    path = unit_pair(tmp_path, "[Service]\nExecStart=/bin/a\n")
    (tmp_path / "job.service.d").mkdir()
    (tmp_path / "job.service.d/10-cmd.conf").write_text("[Service]\nExecStart=\nExecStart=/bin/b\n")
    (tmp_path / "job.timer.d").mkdir()
    (tmp_path / "job.timer.d/x.conf").write_text("[Timer]\nOnCalendar=\nOnCalendar=weekly\n")
    j = job(path)
    assert argvs(j) == [("/bin/b",)] and j.schedule["on"] == ["mon"]


_KEYS = ["OnCalendar", "OnBootSec", "OnUnitActiveSec", "Persistent", "RandomizedDelaySec",
         "Unit", "ExecStart", "ExecStartPre", "Environment", "EnvironmentFile", "Type",
         "WorkingDirectory", "User", "TimeoutStartSec", "ExecStopPost"]
_VALUES = st.one_of(st.text(max_size=30), st.sampled_from([
    "daily", "*:0/15", "1h", "yes", "oneshot", "/bin/echo $A ${B} %n", "-/etc/x", "~", "",
    "'a b' \"c", "x.service", "A=1 'B=2 3'", "%H", "@/bin/x y", "infinity"]))
_LINES = st.one_of(st.sampled_from(["[Timer]", "[Service]", "[Unit]", "# c", "", "\\"]),
                   st.tuples(st.sampled_from(_KEYS), _VALUES).map("=".join), st.text(max_size=20))
_UNITS = st.lists(_LINES, max_size=12).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(timer=_UNITS, service=_UNITS)
def test_arbitrary_unit_text_is_a_job_or_a_one_line_refusal(tmp_path_factory, timer, service):
    folder = tmp_path_factory.mktemp("u")
    path = unit_pair(folder, service, timer)
    [found] = read_timer_unit(path, ZONE, root=folder / "root")
    if isinstance(found, Refusal):
        assert found.reason and "\n" not in found.line()
    else:
        assert found.steps and all(s.argv for s in found.steps)


def test_the_import_table_readers(tmp_path):
    """What `legacy import` calls: the timer's text already read; a service alone names the
    timer to give instead."""
    path = unit_pair(tmp_path, "[Service]\nExecStart=/bin/a\n")
    [found] = systemd.read(path, "[Timer]\nOnCalendar=weekly\n")  # the text given wins
    assert isinstance(found, OldJob) and found.schedule["on"] == ["mon"]
    [alone] = systemd.read_alone(tmp_path / "job.service", "")
    assert isinstance(alone, Refusal) and "import the timer that starts it (job.timer)" in \
        alone.reason
    [other] = systemd.read_alone(tmp_path / "other.service", "")
    assert "not a scheduled job" in other.reason
