"""`tickq legacy check`: the parity of a registry and the old file its kinds came from fails on
every way the two can drift apart (another command, a moved line still active, a shorter
timeout, an unarmed irreversible lane, a command that cannot start), naming each."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import tomllib
from pathlib import Path

import pytest
from legacy_folder import make_folder
from processes import tickq

from tickq.registry import parse_registry

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "orchestrator"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path)


# ---------------------------------------------------------------- the parity check

REGISTRY = """\
[kinds.sf_pull]
command = ["bin/sf", "pull"]
every = "1h"
timeout = "25m"
legacy = "timeout 25m bin/sf pull"

[kinds.payout]
command = ["bin/payout", "--live"]
every = "1h"
timeout = "10m"
irreversible = true
legacy = "# timeout 10m bin/payout --live"

[kinds.core]
every = "1h"
timeout = "1h"

[[kinds.core.steps]]
name = "ingest"
command = ["jobs/bin/ingest", "a b"]
timeout = "20m"
cwd = "jobs"
legacy = 'cd jobs && timeout 20m bin/ingest "a b"'

[[kinds.core.steps]]
name = "publish"
command = ["bin/publish"]
timeout = "5m"
legacy = "bin/publish"
"""

OLD_MOVED = """\
#tickq:sf_pull# timeout 25m bin/sf pull
#tickq:payout# # timeout 10m bin/payout --live
#tickq:core/ingest# cd jobs && timeout 20m bin/ingest "a b"
#tickq:core/publish# bin/publish
bin/still-by-the-old-script
"""


def run_check(folder: Path, registry: str, old: str) -> subprocess.CompletedProcess[str]:
    (folder / "registry.toml").write_text(registry)
    (folder / "old.sh").write_text(old)
    return tickq("legacy", "check", "old.sh", "--registry", "registry.toml", cwd=folder)


def test_check_passes_when_registry_and_old_file_agree(folder: Path) -> None:
    result = run_check(folder, REGISTRY, OLD_MOVED)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "legacy parity holds: 4 kind(s) and step(s)" in result.stdout


def test_check_marks_the_first_differing_character(folder: Path) -> None:
    result = run_check(folder, REGISTRY.replace('["bin/sf", "pull"]', '["bin/sf", "pul"]'),
                       OLD_MOVED)
    assert result.returncode == 1
    out = result.stdout.split("\n")
    i = out.index('FAIL kind "sf_pull": the command differs from its legacy line at character 11')
    assert out[i + 1:i + 4] == ["  tickq:  bin/sf pul", "  legacy: bin/sf pull",
                                "                    ^"]


def test_check_compares_the_joined_argv_so_quoting_matters_only_where_bash_sees_it(
    folder: Path,
) -> None:
    same = REGISTRY.replace('legacy = "bin/publish"', "legacy = \"'bin/publish'\"")
    assert run_check(folder, same, OLD_MOVED.replace("# bin/publish", "# 'bin/publish'")
                     ).returncode == 0
    split_differently = REGISTRY.replace('["jobs/bin/ingest", "a b"]',
                                         '["jobs/bin/ingest", "a", "b"]')
    result = run_check(folder, split_differently, OLD_MOVED)
    assert result.returncode == 1
    assert "  tickq:  jobs/bin/ingest a b\n  legacy: jobs/bin/ingest 'a b'\n" in result.stdout
    assert 'kind "core", step "ingest": the command differs' in result.stdout


FAILURES = {
    "marker names a missing kind": (
        REGISTRY, OLD_MOVED.replace("#tickq:sf_pull#", "#tickq:sf_pul#"),
        'old.sh:1: moved to kind "sf_pul", which is not in the registry: nothing runs this line'),
    "marker names a missing step": (
        REGISTRY, OLD_MOVED.replace("core/publish", "core/publsh"),
        'old.sh:4: moved to kind "core", step "publsh", which is not in the registry'),
    "moved to a disabled kind": (
        REGISTRY.replace('timeout = "25m"\n', 'timeout = "25m"\nenabled = false\n'), OLD_MOVED,
        'old.sh:1: moved to kind "sf_pull", which is disabled: nothing runs this line now'),
    "active line while its kind is enabled": (
        REGISTRY, OLD_MOVED.replace("#tickq:sf_pull# ", ""),
        'old.sh:1: still active while kind "sf_pull" is enabled: both would run it'),
    "active step line while its chain is enabled": (
        REGISTRY, OLD_MOVED.replace("#tickq:core/publish# ", ""),
        'old.sh:4: still active while kind "core", step "publish" is enabled'),
    "timeout shorter than the old watchdog": (
        REGISTRY.replace('timeout = "25m"', 'timeout = "20m"'), OLD_MOVED,
        'kind "sf_pull": timeout 20m is shorter than the old line\'s 25m'),
    "step timeout shorter than its old line's": (
        REGISTRY.replace('timeout = "20m"', 'timeout = "15m"'), OLD_MOVED,
        'kind "core", step "ingest": timeout 15m is shorter than the old line\'s 20m'),
    "irreversible kind's old line active": (
        REGISTRY, OLD_MOVED.replace("#tickq:payout# # ", ""),
        'old.sh:2: the old line of irreversible kind "payout" is active'),
    "moved line differs from the kind's legacy": (
        REGISTRY, OLD_MOVED.replace("# bin/publish", "# bin/publish --all"),
        'old.sh:4: the moved line differs from the legacy line of kind "core", step "publish" '
        "at character 12"),
    "legacy line that needs a shell": (
        REGISTRY.replace('legacy = "bin/publish"', 'legacy = "bin/publish | tee x"'),
        OLD_MOVED.replace("# bin/publish", "# bin/publish | tee x"),
        'kind "core", step "publish": its legacy line cannot run in tickq as it is: a pipe'),
    "env that differs from the old line's, without printing values": (
        REGISTRY.replace('cwd = "jobs"', 'cwd = "jobs"\nenv = { TOKEN = "s3cret" }'), OLD_MOVED,
        'kind "core", step "ingest": env differs from the old line\'s in TOKEN\n'),
    "chain steps in another order than their old lines": (
        REGISTRY, "\n".join(OLD_MOVED.split("\n")[i] for i in (0, 1, 3, 2, 4)) + "\n",
        'kind "core": its steps run in another order than their old lines in old.sh: registry '
        "ingest, publish; old file publish, ingest"),
    "cwd that differs from the old cd": (
        REGISTRY.replace('cwd = "jobs"', 'cwd = "bin"'), OLD_MOVED,
        'kind "core", step "ingest": cwd bin differs from the old line\'s cd jobs'),
}


@pytest.mark.parametrize("case", FAILURES)
def test_check_fails_with_its_message(folder: Path, case: str) -> None:
    registry, old, message = FAILURES[case]
    result = run_check(folder, registry, old)
    assert result.returncode == 1, result.stdout
    assert message in result.stdout
    assert "s3cret" not in result.stdout
    assert "legacy check failed" in result.stderr


def test_check_fails_while_an_enabled_irreversible_kind_is_unarmed_in_the_queue(
    folder: Path, db_url: str
) -> None:
    (folder / "bin" / "payout").write_text("#!/bin/sh\necho paid\n")
    (folder / "bin" / "payout").chmod(0o755)
    files_only = run_check(folder, REGISTRY, OLD_MOVED)
    assert files_only.returncode == 0 and "arming not checked" in files_only.stdout
    assert tickq("sync", "--registry", "registry.toml", "--database-url", db_url,
                 cwd=folder).returncode == 0

    unarmed = tickq("legacy", "check", "old.sh", "--registry", "registry.toml",
                    "--database-url", db_url, cwd=folder)
    assert unarmed.returncode == 1, unarmed.stdout + unarmed.stderr
    assert "irreversible kind 'payout' is enabled for its schedule but not armed" in unarmed.stdout

    first = tickq("run", "payout", "--yes-i-ran-this-by-hand", "--registry", "registry.toml",
                  "--database-url", db_url, cwd=folder)
    assert first.returncode == 0, first.stderr
    armed = tickq("legacy", "check", "old.sh", "--registry", "registry.toml",
                  "--database-url", db_url, cwd=folder)
    assert armed.returncode == 0, armed.stdout + armed.stderr


def test_check_fails_while_an_irreversible_kind_is_not_in_the_queue_at_all(
    folder: Path, db_url: str
) -> None:
    # Before the first sync the queue holds none of the kinds: a gate run then proves nothing.
    run_check(folder, REGISTRY, OLD_MOVED)
    before = tickq("legacy", "check", "old.sh", "--registry", "registry.toml",
                   "--database-url", db_url, cwd=folder)
    assert before.returncode == 1, before.stdout + before.stderr
    assert ("irreversible kind 'payout' is not in that queue: sync the registry (tickq sync) "
            "and run it once by hand (tickq run payout)") in before.stdout, before.stdout
    assert "Traceback" not in before.stderr
    assert tickq("sync", "--registry", "registry.toml", "--database-url", db_url,
                 cwd=folder).returncode == 0
    synced = tickq("legacy", "check", "old.sh", "--registry", "registry.toml",
                   "--database-url", db_url, cwd=folder)
    assert "not in that queue" not in synced.stdout, synced.stdout
    assert "but not armed" in synced.stdout, synced.stdout


def test_a_disabled_irreversible_kind_with_its_line_moved_passes(folder: Path) -> None:
    registry = REGISTRY.replace("irreversible = true\n", "irreversible = true\nenabled = false\n")
    assert run_check(folder, registry, OLD_MOVED).returncode == 0


def test_a_step_in_a_folder_that_is_not_the_old_lines_fails_parity(folder: Path) -> None:
    # The registry is read as tick reads it: a missing folder is that step's own problem (it
    # fails when it runs), not a refused file; parity names the difference.
    result = run_check(folder, REGISTRY.replace('cwd = "jobs"', 'cwd = "job"'), OLD_MOVED)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "cwd job differs from the old line's cd jobs" in result.stdout + result.stderr


@pytest.mark.parametrize(("registry", "old", "message"), [
    ("[kinds.a\n", OLD_MOVED, "invalid TOML"),
    ('[kinds.a]\ncommand = "bin/a"\nevery = "1h"\ntimeout = "1m"\n', OLD_MOVED,
     'kind "a", key "command": command must be a list of strings'),
    ('[kinds.a]\ncommand = ["a"]\nevery = "1h"\ntimeout = "1m"\nlegacy = 3\n', OLD_MOVED,
     'kind "a", key "legacy": legacy must be a string'),
    ('[kinds.a]\ncommand = ["a"]\nevery = "1h"\ntimeout = "10"\n', OLD_MOVED, "needs a unit"),
    (REGISTRY, None, "old.sh: file not found"),
])
def test_check_exits_2_on_invalid_input(folder: Path, registry: str, old: str | None,
                                        message: str) -> None:
    result = run_check(folder, registry, old or "")
    if old is None:
        (folder / "old.sh").unlink()
        result = tickq("legacy", "check", "old.sh", "--registry", "registry.toml", cwd=folder)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_check_lists_every_registry_problem_in_one_line_each(folder: Path) -> None:
    registry = '[kinds.a]\ncommand = "bin/a"\nevery = "1h"\ntimeout = "1m"\nlegacy = 3\n'
    result = run_check(folder, registry, OLD_MOVED)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("tickq: registry.toml: ") for line in lines)
    assert 'key "command"' in lines[0] and 'key "legacy"' in lines[1]


def test_registry_accepts_legacy_and_irreversible_but_does_not_sync_them(tmp_path: Path) -> None:
    registry = parse_registry(textwrap.dedent("""\
        [kinds.payout]
        command = ["bin/payout"]
        every = "1h"
        timeout = "10m"
        irreversible = true
        legacy = "timeout 10m bin/payout"
        """), "r.toml", tmp_path)
    kind = registry.kinds["payout"]
    assert (kind.legacy, kind.irreversible) == ("timeout 10m bin/payout", True)
    assert "legacy" not in registry.to_sync_json()["kinds"]["payout"]
    with pytest.raises(Exception, match='key "legacy": legacy must be a string'):
        parse_registry('[kinds.a]\ncommand = ["a"]\nevery = "1h"\ntimeout = "1m"\nlegacy = 1\n',
                       "r.toml", tmp_path)


# ---------------------------------------------------------------- commands that can start


def test_check_fails_when_a_command_cannot_start(folder: Path) -> None:
    # Each kind runs its legacy line character for character; neither can start.
    registry = textwrap.dedent("""\
        [kinds.gone]
        command = ["bin/gone"]
        every = "1h"
        timeout = "1h"
        legacy = "bin/gone"

        [kinds.up]
        every = "1h"
        timeout = "1h"

        [[kinds.up.steps]]
        name = "load"
        command = ["../bin/argv"]
        cwd = "jobs"
        timeout = "1h"
        legacy = "cd jobs && ../bin/argv"
        """)
    old = "#tickq:gone# bin/gone\n#tickq:up/load# cd jobs && ../bin/argv\n"
    result = run_check(folder, registry, old)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL kind \"gone\": command cannot start: 'bin/gone': no such file" in result.stdout
    assert ("FAIL kind \"up\", step \"load\": command cannot start: '../bin/argv': no such file"
            in result.stdout)
    # The step names another file than the one the old line ran (jobs/../bin/argv).
    assert "  tickq:  ../bin/argv\n  legacy: bin/argv\n" in result.stdout


def test_the_file_the_shell_ran_through_a_symlinked_cd_is_the_one_named(folder: Path) -> None:
    # jobs/ is a link to elsewhere/jobs: `cd jobs && ../bin/argv` ran elsewhere/bin/argv.
    elsewhere = folder / "elsewhere"
    (elsewhere / "jobs").mkdir(parents=True)
    shutil.copytree(folder / "bin", elsewhere / "bin")
    shutil.rmtree(folder / "jobs")
    (folder / "jobs").symlink_to(elsewhere / "jobs")
    registry = ('[kinds.argv]\ncommand = ["{}"]\ncwd = "jobs"\nevery = "1h"\ntimeout = "1h"\n'
                'legacy = "cd jobs && ../bin/argv"\n')
    old = "#tickq:argv# cd jobs && ../bin/argv\n"
    assert run_check(folder, registry.format("elsewhere/bin/argv"), old).returncode == 0
    result = run_check(folder, registry.format("bin/argv"), old)
    assert result.returncode == 1, result.stdout
    assert "  tickq:  bin/argv\n  legacy: elsewhere/bin/argv\n" in result.stdout
    (folder / "old.sh").write_text("cd jobs && ../bin/argv\n")
    (folder / "registry.toml").write_text("")  # else the line is already its kind
    imported = tickq("legacy", "import", "old.sh", "--registry", "registry.toml", cwd=folder)
    assert imported.returncode == 0, imported.stderr
    [kind] = tomllib.loads(imported.stdout)["kinds"].values()
    assert kind["command"] == ["elsewhere/bin/argv"]


def test_the_orchestrator_example_can_start_every_command() -> None:
    from tickq.host.programs import problems
    from tickq.registry import load_registry

    assert problems(load_registry(EXAMPLE / "registry.toml")) == []
    result = tickq("legacy", "check", "orchestrator.sh", "--registry", "registry.toml",
                   cwd=EXAMPLE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cannot start" not in result.stdout
