"""`tickq legacy import`: an old orchestrator's lines become kinds that run exactly what bash
ran, and the old file keeps them commented as the rollback path (the parity check that fails on
every way the two can drift apart: test_legacy_parity.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from legacy_folder import make_folder
from processes import tickq

from tickq.host.programs import resolve
from tickq.legacy import names
from tickq.legacy import shell as legacy
from tickq.registry import parse_registry

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "orchestrator"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path)


def run_as_tick(kind: dict, folder: Path) -> subprocess.CompletedProcess[str]:
    """A kind's (or step's) command started as the dispatcher starts it (tickq.host.programs)."""
    started = resolve(kind["command"], folder, folder / kind.get("cwd", "."), kind.get("env"))
    assert started.problem is None, started.problem
    return subprocess.run(started.argv, cwd=started.cwd, capture_output=True, text=True,
                          env={**os.environ, **kind.get("env", {})}, check=True)

# ---------------------------------------------------------------- import: argv as bash runs it

ROUND_TRIPS = [
    "bin/argv plain 'single quoted' \"double quoted\" escaped\\ space",
    "timeout 25m bin/argv \"it's\" 'say \"hi\"' a\\\\b \"back\\\\slash\" \"x\\y\"",
    "cd jobs && LEGACY_X='v w' timeout -s KILL 30m bin/argv --flag=1 \"x\"",
    "LEGACY_X=1 LEGACY_Y=two bin/argv x || true",
    "env LEGACY_X=1 bin/argv a#b 'c#' # a trailing comment",
    "bin/argv \"tab\tinside\" 'new\nline' end",
    "timeout --signal=INT 90 bin/argv é ünïcode \\\n    continued 'on the next line'",
    "  bin/argv   leading   spaces  ",
    "timeout -k 5s 1.5m bin/argv -- --not-an-option",
    "LEGACY_X=1 env LEGACY_Y=\"2 3\" timeout 5m env LEGACY_X=4 bin/argv x",
]


@pytest.mark.parametrize(("line", "argv", "env"), [
    ('"A=b" bin/x', ("A=b", "bin/x"), {}),  # a quoted name=value is the command, not a variable
    ("A\\=b bin/x", ("A=b", "bin/x"), {}),
    ('env "A=b" bin/x', ("bin/x",), {"A": "b"}),  # env takes it however it is quoted
    ("timeout 5m A=b bin/x", ("A=b", "bin/x"), {}),  # timeout runs its next word
    ('A="b c" bin/x', ("bin/x",), {"A": "b c"}),
])
def test_assignments_are_read_where_the_shell_reads_them(line: str, argv: tuple[str, ...],
                                                         env: dict[str, str]) -> None:
    t = legacy.translate(line)
    assert (t.argv, dict(t.env)) == (argv, env)


@pytest.mark.parametrize("line", ROUND_TRIPS)
def test_import_runs_the_argv_bash_runs(folder: Path, line: str) -> None:
    old = folder / "old.sh"
    old.write_text(f"#!/bin/bash\n{line}\n")
    result = tickq("legacy", "import", str(old), "--registry", str(folder / "registry.toml"))
    assert result.returncode == 0, result.stderr
    kinds = tomllib.loads(result.stdout)["kinds"]
    [(name, kind)] = kinds.items()
    assert kind["legacy"] == line
    by_bash = subprocess.run(["bash", "-c", line], cwd=folder, capture_output=True, text=True,
                             check=True).stdout
    by_kind = run_as_tick(kind, folder).stdout
    assert json.loads(by_kind) == json.loads(by_bash)
    # What import wrote is a registry tickq accepts.
    parse_registry(result.stdout.replace(f"[kinds.{name}]", "[settings]\n\n[kinds.k]"),
                   "import", folder)


def test_an_imported_kind_run_by_tickq_prints_what_bash_printed(folder: Path, db_url: str) -> None:
    line = "cd jobs && LEGACY_Y=\"a b\" timeout 1m bin/argv 'one two' three\\ four \"five\""
    old = folder / "old.sh"
    old.write_text(line + "\n")
    registry = folder / "registry.toml"
    registry.write_text("[settings]\nslots = 1\n")
    assert tickq("legacy", "import", str(old), "--registry", str(registry),
                 "--write", "--database-url", db_url).returncode == 0
    run = tickq("run", "argv", "--registry", str(registry), "--database-url", db_url)
    assert run.returncode == 0, run.stderr
    by_bash = subprocess.run(["bash", "-c", line], cwd=folder, capture_output=True, text=True,
                             check=True).stdout
    assert json.loads(run.stdout.strip().splitlines()[-1]) == json.loads(by_bash)


def test_old_lines_end_where_bash_ends_them() -> None:
    text = ("bin/a one \\\n  two # a comment \\\nbin/b 'open\nquote' \\\\\n"
            "#tickq:c# bin/c \\\n#tickq:c#   more\n#tickq:d# bin/d\n")
    lines = legacy.read_old_file(text)
    assert [(ln.first, ln.last, ln.moved_to) for ln in lines] == [
        (1, 2, None), (3, 4, None), (5, 6, "c"), (7, 7, "d")]
    assert lines[0].text == "bin/a one \\\n  two # a comment \\"
    assert legacy.translate(lines[0].text).argv == ("bin/a", "one", "two")
    assert legacy.translate(lines[1].text).argv == ("bin/b", "open\nquote", "\\")
    assert legacy.translate(lines[2].text).argv == ("bin/c", "more")


REFUSED = {
    "echo $HOME": "variable expansion",
    'bin/x "$HOME"': "variable expansion",
    "bin/x $'a\\tb'": "ANSI-C quoting",
    "bin/x `date`": "backticks",
    "bin/x $(date)": "command substitution",
    "bin/x | grep y": "a pipe",
    "bin/x > out.log": "a redirection",
    "bin/x 2>&1": "a redirection",
    "bin/x <<EOF": "here-document",
    "bin/x; bin/y": "several commands",
    "bin/x && bin/y": "a command list",
    "bin/x || bin/y": "a command list",
    "(bin/x)": "subshell",
    "bin/x *.csv": "a glob",
    "bin/x ~/data": "tilde",
    "bin/x {a,b}": "brace",
    "bin/x &": "background",
    "set -e": "shell builtin",
    "export A=b": "shell builtin",
    "A=b": "runs nothing",
    "bin/x ''": "an empty argument",
    'bin/x "unclosed': "ends inside quotes",
    "timeout bin/x": "is not a number",
    "bin/x\r": "carriage return",
}


@pytest.mark.parametrize("line", REFUSED)
def test_lines_that_need_a_shell_are_refused_with_the_reason(line: str) -> None:
    with pytest.raises(legacy.Untranslatable, match=re.escape(REFUSED[line])):
        legacy.translate(line)


def test_unparseable_lines_are_reported_by_number_and_left_untouched(folder: Path,
                                                                     db_url: str) -> None:
    text = ("#!/bin/bash\nset -euo pipefail\ntimeout 25m bin/sf pull\nbin/report | mail -s x\n"
            "# a comment\n\nbin/argv $HOME\n")
    old = folder / "old.sh"
    old.write_text(text)
    result = tickq("legacy", "import", str(old), "--registry", str(folder / "r.toml"), "--write",
                   "--database-url", db_url)
    assert result.returncode == 0, result.stderr
    assert f"{old}:2: left as it is: " in result.stderr
    assert f"{old}:4: left as it is: a pipe (|)" in result.stderr
    assert f"{old}:7: left as it is: variable expansion ($)" in result.stderr
    lines = old.read_text().split("\n")
    assert lines[2] == "#tickq:sf_pull# timeout 25m bin/sf pull"
    assert [lines[i] for i in (0, 1, 3, 4, 5, 6)] == [text.split("\n")[i] for i in
                                                       (0, 1, 3, 4, 5, 6)]


def test_kind_names_fit_the_pattern_and_do_not_repeat() -> None:
    kind_name = names.kind_name
    assert kind_name(["bin/sf", "pull", "--all"]) == "sf_pull"
    assert kind_name(["bin/report", "revenue", "--format", "html"]) == "report_revenue"
    assert kind_name(["python3", "-u", "jobs/Ingest.py", "--weekly"]) == "ingest_weekly"
    assert kind_name(["bin/sf", "pull"], {"sf_pull", "sf_pull_2"}) == "sf_pull_3"
    assert kind_name(["./@@@"]) == "job"
    assert kind_name(["/opt/tickq.x"]) == "job_tickq_x"


# ---------------------------------------------------------------- --write and the rollback

OLD_SCRIPT = """\
#!/bin/bash
# the hourly orchestrator
set -euo pipefail
timeout 25m bin/sf pull
timeout 25m bin/sf \\
  push --all
cd jobs && LEGACY_X=1 timeout 20m bin/ingest "a b" || true
timeout -s KILL 30m bin/slack sweep
bin/report | mail -s report ops
# timeout 10m bin/payout --live
   timeout 5m bin/argv  indented"""  # no newline at the end: kept as it is


def test_write_comments_the_lines_and_appends_the_kinds_and_uncommenting_restores(
    folder: Path, db_url: str,
) -> None:
    old = folder / "old.sh"
    old.write_text(OLD_SCRIPT)
    old.chmod(0o750)
    registry = folder / "registry.toml"
    registry.write_text('[settings]\nslots = 3\n\n[kinds.sf_pull]\ncommand = ["bin/other"]\n'
                        'every = "1h"\ntimeout = "1m"\nenabled = false\n')
    before = registry.read_text()
    result = tickq("legacy", "import", str(old), "--registry", str(registry), "--write",
                   "--database-url", db_url, "--chain", "core", "4", "7", "--irreversible", "10")
    assert result.returncode == 0, result.stderr
    after = old.read_text()
    assert after.split("\n")[3:11] == [
        "#tickq:core/sf_pull# timeout 25m bin/sf pull",
        "#tickq:core/sf_push# timeout 25m bin/sf \\",
        "#tickq:core/sf_push#   push --all",
        '#tickq:core/ingest# cd jobs && LEGACY_X=1 timeout 20m bin/ingest "a b" || true',
        "#tickq:slack_sweep# timeout -s KILL 30m bin/slack sweep",
        "bin/report | mail -s report ops",
        "#tickq:payout_live# # timeout 10m bin/payout --live",
        "#tickq:argv_indented#    timeout 5m bin/argv  indented",
    ]
    assert old.stat().st_mode & 0o777 == 0o750
    # The registry keeps what it had and gains the kinds, the chain's steps in file order.
    text = registry.read_text()
    assert text.startswith(before)
    doc = tomllib.loads(text)
    assert list(doc["kinds"]) == ["sf_pull", "core", "slack_sweep", "payout_live",
                                  "argv_indented"]
    core = doc["kinds"]["core"]
    assert [s["name"] for s in core["steps"]] == ["sf_pull", "sf_push", "ingest"]
    assert core["timeout"] == "1h10m"
    assert core["steps"][1]["legacy"] == "timeout 25m bin/sf \\\n  push --all"
    assert core["steps"][2]["continue_on_failure"] is True
    assert core["steps"][2]["env"] == {"LEGACY_X": "1"}
    assert doc["kinds"]["payout_live"]["irreversible"] is True
    assert doc["kinds"]["slack_sweep"]["timeout"] == "30m"
    # The rollback: take the markers off, and the old file is back byte for byte.
    assert re.sub(r"(?m)^#tickq:[^#\s]+# ", "", after) == OLD_SCRIPT
    # And the pair passes its own parity check.
    check = tickq("legacy", "check", str(old), "--registry", str(registry))
    assert check.returncode == 0, check.stdout + check.stderr


def test_write_through_a_symlink_keeps_the_link(folder: Path, db_url: str) -> None:
    (folder / "real.sh").write_text("timeout 5m bin/argv x\n")
    (folder / "old.sh").symlink_to("real.sh")
    result = tickq("legacy", "import", str(folder / "old.sh"), "--registry",
                   str(folder / "r.toml"), "--write", "--database-url", db_url)
    assert result.returncode == 0, result.stderr
    assert (folder / "old.sh").is_symlink()
    assert (folder / "real.sh").read_text() == "#tickq:argv_x# timeout 5m bin/argv x\n"


def test_without_write_nothing_changes(folder: Path) -> None:
    old = folder / "old.sh"
    old.write_text(OLD_SCRIPT)
    result = tickq("legacy", "import", str(old), "--registry", str(folder / "registry.toml"))
    assert result.returncode == 0, result.stderr
    assert "[kinds.sf_pull]" in result.stdout
    assert old.read_text() == OLD_SCRIPT
    assert not (folder / "registry.toml").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--chain", "core", "3", "5"], "line 3 cannot be a step"),
    (["--chain", "core", "9", "4"], "FROM-LINE <= TO-LINE"),
    (["--chain", "Bad Name", "4", "5"], "not a kind name"),
    (["--chain", "a", "4", "5", "--chain", "b", "5", "6"], "already in --chain a"),
    (["--irreversible", "9"], "--irreversible 9: a pipe"),
    (["--irreversible", "6"], "no old line starts there"),
])
def test_import_requests_that_cannot_be_done_write_nothing(
    folder: Path, args: list[str], message: str,
) -> None:
    old = folder / "old.sh"
    old.write_text(OLD_SCRIPT)
    result = tickq("legacy", "import", str(old), "--registry", str(folder / "r.toml"), "--write",
                   *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert old.read_text() == OLD_SCRIPT
    assert not (folder / "r.toml").exists()


# ---------------------------------------------------------------- the example


def test_the_orchestrator_example_passes_its_parity_check(tmp_path: Path) -> None:
    result = tickq("legacy", "check", "orchestrator.sh", "--registry", "registry.toml",
                   cwd=EXAMPLE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "legacy parity holds: 32 kind(s) and step(s)" in result.stdout
    notes = [ln for ln in result.stdout.splitlines() if ln.startswith("note:")]
    # Its two irreversible lanes are enabled: their arming is the queue's to say (--database-url).
    assert notes == ["note: arming not checked: give --database-url to fail while an enabled "
                     "irreversible kind has had no first run by hand"]


def test_the_orchestrator_example_is_what_import_makes_of_the_old_script(
    tmp_path: Path, db_url: str
) -> None:
    """Roll the example back (take the markers off), import it again as its README says, and
    get the same commented file; the fresh registry passes the check too."""
    work = tmp_path / "orchestrator"
    shutil.copytree(EXAMPLE, work)
    moved = (EXAMPLE / "orchestrator.sh").read_text()
    (work / "orchestrator.sh").write_text(re.sub(r"(?m)^#tickq:[^#\s]+# ", "", moved))
    settings = (EXAMPLE / "registry.toml").read_text().split("\n# Moved from")[0]
    (work / "registry.toml").write_text(settings)
    imported = tickq("legacy", "import", "orchestrator.sh", "--registry", "registry.toml",
                     "--write", "--database-url", db_url,
                     "--chain", "core", "9", "16", "--irreversible", "45",
                     "--irreversible", "46", cwd=work)
    assert imported.returncode == 0, imported.stderr
    assert (work / "orchestrator.sh").read_text() == moved
    check = tickq("legacy", "check", "orchestrator.sh", "--registry", "registry.toml", cwd=work)
    assert check.returncode == 0, check.stdout
    # Every command the example moves exists and runs.
    for kind in tomllib.loads((work / "registry.toml").read_text())["kinds"].values():
        for step in kind.get("steps", [kind]):
            run_as_tick(step, work)


# ---------------------------------------------------------------- commands that can start


def test_a_cd_line_imports_as_the_program_the_shell_ran_and_runs(folder: Path,
                                                                 db_url: str) -> None:
    """`cd jobs && ../bin/argv` ran bin/argv from jobs/; a program with a "/" is relative to the
    registry's folder, so the kind names it so (bin/argv), in cwd jobs, and tickq runs it."""
    (folder / "jobs" / "bin" / "argv").unlink()  # only the file the old line ran is there
    line = "cd jobs && timeout 1m ../bin/argv one 'two three'"
    (folder / "old.sh").write_text(line + "\n")
    registry = folder / "registry.toml"
    registry.write_text("[settings]\nslots = 1\n")
    imported = tickq("legacy", "import", "old.sh", "--registry", "registry.toml", "--write",
                     "--database-url", db_url, cwd=folder)
    assert imported.returncode == 0, imported.stderr
    [(name, kind)] = tomllib.loads(registry.read_text())["kinds"].items()
    assert (kind["command"], kind["cwd"]) == (["bin/argv", "one", "two three"], "jobs")
    check = tickq("legacy", "check", "old.sh", "--registry", "registry.toml", cwd=folder)
    assert check.returncode == 0, check.stdout + check.stderr
    run = tickq("run", name, "--registry", str(registry), "--database-url", db_url)
    assert run.returncode == 0, run.stdout + run.stderr
    by_bash = subprocess.run(["bash", "-c", line], cwd=folder, capture_output=True, text=True,
                             check=True).stdout
    assert json.loads(run.stdout.strip().splitlines()[-1]) == json.loads(by_bash)
