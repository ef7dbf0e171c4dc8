"""Real crontabs and cron.d files (tests_py/data/legacy/cron, each with its source in
SOURCES.toml) imported into one registry, as a person moving a machine's jobs would: every job
that can move does, the others are named in a line each, and each kind

- falls due exactly when cron would run its old line: its next slots (the database's one
  calendar) equal cronsim's (an independent implementation of Debian's cron) in the machine's
  zone, Europe/Helsinki, over month ends and both clock changes of 2027; where the two differ
  at a clock change, the kind says so in a note, and the instants that differ are named below;
- makes the calls the old line made: run by `tickq run` in a copy-on-write copy of this machine
  (tests_py/cron_sandbox.py) where every program the line names is a recording shim, and the
  old line run there as cron runs it (`env -i <cron's environment> SHELL -c COMMAND` in the
  home folder, its `%` input on stdin), each side's calls (argv, cwd, environment, input) are
  the same, tickq's own TICKQ_* variables aside;
- passes `tickq legacy check` of all the files at once.

Cron's environment and `%` reading are written again in cron_emulation.py, apart from tickq's
code, from what Debian's cron 3.0pl1 was seen doing (see test_legacy_crontab.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest
from cron_emulation import CORPUS, as_cron_runs_it, shims_for
from cronsim import CronSim
from processes import tickq_env
from psycopg.types.json import Jsonb

from tickq import db
from tickq.legacy import readers
from tickq.legacy.oldjob import OldJob
from tickq.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*")
               if p.is_file() and p.name != "SOURCES.toml")
ZONE = "Europe/Helsinki"
SPECIAL = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
           "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
           "@hourly": "0 * * * *"}  # crontab(5)


def _jobs() -> list[str]:
    """Every job of the corpus as FILE:LINE (read once at collection, to name the tests)."""
    found = []
    for name in FILES:
        for item in readers.read(CORPUS / name, (CORPUS / name).read_bytes().decode()):
            if isinstance(item, OldJob) and not item.dormant:
                found.append(f"{name}:{item.where}")
    return found


JOBS = _jobs()
# Left as they are, each in one line: a user with no account here.
LEFT = {"cron.d/freeside:4": "user 'freeside' has no account on this machine"}
# The instants at which cronsim and tickq differ, each explained by the two clock-change rules
# (docs/explanation/daylight-saving.md; cron(8)): ("cron"|"tickq", UTC instant) a slot only one has.
CLOCK_CHANGES = {
    # 03:00 daily. Spring (03:00-04:00 skipped): both run it at 04:00 EEST. Autumn (03:00-04:00
    # twice): cron at the first 03:00 (EEST, 00:00 UTC), tickq at the second (EET, 01:00 UTC).
    **{f"users/cron-scripts:{n}": {("cron", "2027-10-31T00:00"), ("tickq", "2027-10-31T01:00")}
       for n in (5, 6, 7)},
    # 03:45 daily: spring, cron right after the change (04:00 EEST = 01:00 UTC), tickq one gap
    # later (04:45 EEST); autumn as above.
    "users/ups-plus:40": {("cron", "2027-03-28T01:00"), ("tickq", "2027-03-28T01:45"),
                          ("cron", "2027-10-31T00:45"), ("tickq", "2027-10-31T01:45")},
}


@dataclass
class Corpus:
    folder: Path
    url: str
    imported: subprocess.CompletedProcess[str]
    kinds: dict[str, str]  # FILE:LINE -> kind
    entries: dict[str, dict]  # kind -> its registry entry as sync sends it
    notes: dict[str, str]  # kind -> its notes, as import wrote them


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
           template_db: str) -> Corpus:
    name = f"t_{uuid.uuid4().hex}"
    url = db.create_database(pg_server_url, name, template=template_db)
    folder = tmp_path_factory.mktemp("corpus")
    shutil.copytree(CORPUS, folder / "old")
    result = subprocess.run(
        [sys.executable, "-m", "tickq.cli", "legacy", "import", *FILES, "--registry",
         str(folder / "registry.toml"), "--write", "--database-url", url],
        cwd=folder / "old", env=tickq_env(TZ=ZONE), capture_output=True, text=True, timeout=300)
    kinds = {}
    for file in FILES:
        for number, line in enumerate((folder / "old" / file).read_bytes().decode().split("\n"),
                                      1):
            marker = re.match(r"#tickq:([^#\s]+)# ", line)
            if marker:
                kinds[f"{file}:{number}"] = marker.group(1)
    registry = load_registry(folder / "registry.toml")
    text = (folder / "registry.toml").read_text()
    notes = {k: "\n".join(re.findall(rf"(?ms)^\[kinds\.{re.escape(k)}\]\n.*?(?=^\[|\Z)", text))
             for k in registry.kinds}
    yield Corpus(folder, url, result, kinds, registry.to_sync_json()["kinds"], notes)
    db.drop_database(pg_server_url, name)


def test_the_corpus_moves_every_job_it_can_and_names_the_others(corpus: Corpus) -> None:
    assert corpus.imported.returncode == 0, corpus.imported.stderr
    left = [line for line in corpus.imported.stderr.splitlines() if "left as it is" in line]
    assert len(left) == len(LEFT) and all(
        line.startswith(f"{where}: left as it is: {why}") for line, (where, why) in
        zip(sorted(left), sorted(LEFT.items()), strict=True)), left
    assert sorted(corpus.kinds) == sorted(j for j in JOBS if j not in LEFT)
    assert len(JOBS) - len(LEFT) >= 30


# ---------------------------------------------------------------- when: cronsim's slots


def _fields(legacy: str) -> str:
    words = legacy.split()
    return SPECIAL[words[0]] if words[0].startswith("@") else " ".join(words[:5])


def _windows() -> list[tuple[datetime, datetime]]:
    """Around each clock change of 2027 in ZONE and four month ends (of 31, 28, 30 and 31
    days): from the local midnight a day before, 52 hours; for a schedule with more than 300
    slots in that (every minute...), the four hours around the change or the midnight only."""
    zone = ZoneInfo(ZONE)
    events = [datetime(2027, 3, 28, 1, tzinfo=UTC), datetime(2027, 10, 31, 1, tzinfo=UTC),
              *(datetime.fromisoformat(d).replace(tzinfo=zone)
                for d in ("2027-02-01", "2027-03-01", "2027-05-01", "2028-01-01"))]
    return [(e.astimezone(zone).replace(hour=0, minute=0) - timedelta(days=1), e)
            for e in events]


def _cron_slots(fields: str, start: datetime, end: datetime) -> list[datetime]:
    found = []
    for at in CronSim(fields, start - timedelta(seconds=1)):
        if at >= end or len(found) > 4000:
            break
        found.append(at.astimezone(UTC))
    return found


@pytest.mark.parametrize("job", [j for j in JOBS if j not in LEFT])
def test_each_kind_falls_due_when_cron_ran_its_line(corpus: Corpus, job: str) -> None:
    kind = corpus.kinds[job]
    entry = corpus.entries[kind]
    legacy = corpus_legacy(corpus, kind)
    fields = _fields(legacy)
    differ = set()
    with psycopg.connect(corpus.url, autocommit=True) as conn:
        for start, event in _windows():
            end = start + timedelta(hours=52)
            cron = _cron_slots(fields, start, end)
            if len(cron) > 300:
                start, end = event - timedelta(hours=2), event + timedelta(hours=2)
                cron = _cron_slots(fields, start, end)
            rows = conn.execute(
                "SELECT at FROM tickq.schedule_slots(%s, %s, %s, %s, %s)",
                [kind, Jsonb(entry), ZONE, len(cron) + 5, start - timedelta(seconds=1)]).fetchall()
            ours = [r[0].astimezone(UTC) for r in rows if r[0] < end]
            differ |= {("cron", f"{at:%Y-%m-%dT%H:%M}") for at in set(cron) - set(ours)}
            differ |= {("tickq", f"{at:%Y-%m-%dT%H:%M}") for at in set(ours) - set(cron)}
    assert differ == CLOCK_CHANGES.get(job, set()), (legacy, sorted(differ))
    said = f"clock changes in {ZONE}" in corpus.notes[kind]
    assert said == (job in CLOCK_CHANGES), corpus.notes[kind]


def corpus_legacy(corpus: Corpus, kind: str) -> str:
    registry = load_registry(corpus.folder / "registry.toml")
    return registry.kinds[kind].legacy or ""


# ---------------------------------------------------------------- what: the calls each side makes

# The METARMap crontab has CRLF line ends: cron hands `.../refresh.sh\r` to the shell, which
# finds no such file; neither side calls anything.
CALLS_NOTHING = {"users/metarmap:23", "users/metarmap:24"}


@pytest.fixture(scope="module")
def sandbox(corpus: Corpus) -> dict:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("the sandbox mounts an overlay root: it needs root and unshare(1)")
    jobs, shims, files, dirs = [], set(), set(), set()
    for job, kind in sorted(corpus.kinds.items()):
        file, _, number = job.rpartition(":")
        run = as_cron_runs_it(file, int(number))
        more = shims_for(run)
        shims, files, dirs = shims | more[0], files | more[1], dirs | more[2]
        jobs.append({"id": job, "kind": kind, "argv": run.argv, "env": run.env, "cwd": run.cwd,
                     "stdin": run.stdin})
    host = psycopg.conninfo.conninfo_to_dict(corpus.url).get("host") or ""
    scratch = corpus.folder / "sandbox"
    scratch.mkdir()
    manifest = {
        "scratch": str(scratch), "keep": [host] if host.startswith("/") else [],
        "python": sys.executable, "recorder_python": os.path.realpath(sys.executable),
        "pythonpath": str(REPO / "python_runner"),
        "registry": str(corpus.folder / "registry.toml"), "database_url": corpus.url,
        "after": [["legacy", "check", *(str(corpus.folder / "old" / f) for f in FILES),
                   "--registry", str(corpus.folder / "registry.toml")]], "jobs": jobs,
        "shims": sorted(shims), "plain": sorted(files - shims), "dirs": sorted(dirs),
        "out": str(scratch / "out.json"),
    }
    (scratch / "manifest.json").write_text(json.dumps(manifest))
    ran = subprocess.run(
        ["unshare", "--mount", "--pid", "--fork", "--propagation", "private",
         sys.executable, str(REPO / "tests_py" / "cron_sandbox.py"),
         str(scratch / "manifest.json")], capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads((scratch / "out.json").read_text())


# What a shell sets for the program it starts: a kind that is a plain argv runs without one, so
# its program sees none of them (its note says so).
SHELL_MADE = ("PWD=", "SHLVL=", "_=")


def _comparable(calls: list[dict], plain: bool) -> list[dict]:
    """The calls without tickq's own TICKQ_* variables, and for a plain argv without what the
    shell cron ran it with adds."""
    drop = ("TICKQ_", *(SHELL_MADE if plain else ()))
    return [{**c, "env": [e for e in c["env"] if not e.startswith(drop)]} for c in calls]


@pytest.mark.parametrize("job", [j for j in JOBS if j not in LEFT])
def test_each_kind_makes_the_calls_its_old_line_made(corpus: Corpus, sandbox: dict,
                                                     job: str) -> None:
    ran = sandbox["jobs"][job]
    plain = corpus.entries[corpus.kinds[job]]["command"][1:2] != ["-c"]
    assert "cannot start" not in ran["tickq_output"], ran["tickq_output"]
    assert _comparable(ran["tickq"], plain) == _comparable(ran["cron"], plain), \
        ran["tickq_output"]
    assert bool(ran["cron"]) == (job not in CALLS_NOTHING), ran
    assert (ran["tickq_status"] == 0) == (ran["cron_status"] == 0), ran


def test_the_whole_corpus_passes_one_legacy_check(sandbox: dict) -> None:
    status, out, err = sandbox["after"][0]
    assert status == 0, out + err
    assert re.search(r"legacy parity holds: \d+ kind\(s\)", out)
