"""A throwaway copy of this machine in which old crontab lines and the kinds that replace them
run side by side with every program they call replaced by a recording shim.

Run as root by tests_py/test_legacy_corpus.py, as

    unshare --mount --pid --fork --propagation private PYTHON cron_sandbox.py MANIFEST

it mounts an overlay over `/` (its writes land in a tmpfs of this mount namespace, so nothing
of the machine changes: a missed program that deletes or shuts down acts on the copy), binds in
the run's scratch folder and the database's socket folder, and chroots there. Then it makes the
folders and shims the manifest names, and for each job runs the old line the way cron runs it
(`SHELL -c COMMAND` in the home folder, cron's environment and nothing else, the `%` input on
standard input) and the kind by `tickq run KIND`, recording each side's calls: a shim is a
`#!/bin/sh` file that execs the recorder with its own path and arguments, and the recorder
appends argv, cwd, the environment it was started with (/proc/self/environ) and its standard
input to a log. Last it runs the manifest's `after` commands (`tickq legacy check` of the old
files, `tickq check`). What each side called is written to the manifest's `out` file as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RECORDER = """\
import json, os, sys
data = sys.stdin.buffer.read()
with open("/proc/self/environ", "rb") as f:
    env = sorted(e.decode("utf-8", "surrogateescape") for e in f.read().split(b"\\0") if e)
record = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": env,
          "stdin": data.decode("utf-8", "surrogateescape")}
with open(%r, "a") as f:
    f.write(json.dumps(record) + "\\n")
"""


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def enter(scratch: Path, keep: list[str]) -> None:
    """Mount the copy-on-write root, bind the folders shared with the outside, chroot."""
    upper = scratch / "overlay"
    root = scratch / "root"
    upper.mkdir()
    root.mkdir()
    mount("-t", "tmpfs", "none", str(upper))
    (upper / "u").mkdir()
    (upper / "w").mkdir()
    mount("-t", "overlay", "overlay", "-o",
          f"lowerdir=/,upperdir={upper}/u,workdir={upper}/w", str(root))
    mount("-t", "proc", "proc", str(root / "proc"))
    mount("--rbind", "/dev", str(root / "dev"))
    for folder in [str(scratch), *keep]:
        target = root / folder.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        mount("--bind", folder, str(target))
    os.chroot(root)
    os.chdir("/")


def prepare(manifest: dict) -> Path:
    log = Path(manifest["scratch"]) / "calls.log"
    recorder = Path(manifest["scratch"]) / "recorder.py"
    recorder.write_text(RECORDER % str(log))
    shim = f'#!/bin/sh\nexec {manifest["recorder_python"]} -I -S {recorder} "$0" "$@"\n'
    for folder in manifest["dirs"]:
        Path(folder).mkdir(parents=True, exist_ok=True)
    for path in manifest["plain"]:  # read by a test (`-f X`), never run
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).touch()
    for path in manifest["shims"]:
        target = Path(path)
        if target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(shim)
        target.chmod(0o755)
    return log


def calls(log: Path) -> list[dict]:
    if not log.exists():
        return []
    found = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return found


def run_jobs(manifest: dict, log: Path) -> dict:
    results = {}
    tickq_env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "PYTHONPATH": manifest["pythonpath"],
                 "TICKQ_RUN_DIR": manifest["scratch"] + "/ledger",
                 "TICKQ_CACHE_DIR": manifest["scratch"] + "/cache",
                 "PYTHONDONTWRITEBYTECODE": "1",
                 # Python would set LC_CTYPE=C.UTF-8 in a C locale (PEP 538), and tickq passes
                 # LC_* on (the kinds' note says so): that is not the job's environment.
                 "PYTHONCOERCECLOCALE": "0"}
    for job in manifest["jobs"]:
        calls(log)
        status = None
        if job.get("argv"):  # the old line, as cron runs it
            stdin = job["stdin"].encode() if job["stdin"] is not None else None
            status = subprocess.run(job["argv"], env=job["env"], cwd=job["cwd"], input=stdin,
                                    stdin=None if stdin is not None else subprocess.DEVNULL,
                                    capture_output=True, timeout=60).returncode
        by_cron = calls(log)
        new = subprocess.run(
            [manifest["python"], "-m", "tickq.cli", "run", job["kind"], "--registry",
             manifest["registry"], "--database-url", manifest["database_url"]],
            env=tickq_env, capture_output=True, text=True, timeout=120)
        results[job["id"]] = {"cron": by_cron, "tickq": calls(log), "cron_status": status,
                              "tickq_status": new.returncode, "tickq_output": new.stdout[-2000:]
                              + new.stderr[-2000:]}
    return results


def main() -> None:
    manifest = json.loads(Path(sys.argv[1]).read_text())
    enter(Path(manifest["scratch"]), manifest["keep"])
    log = prepare(manifest)
    results = run_jobs(manifest, log)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": manifest["pythonpath"],
           "TICKQ_CACHE_DIR": manifest["scratch"] + "/cache",
           "TICKQ_RUN_DIR": manifest["scratch"] + "/ledger"}
    after = []
    for argv in manifest["after"]:  # `legacy check`, `check`: where every program is a shim
        done = subprocess.run([manifest["python"], "-m", "tickq.cli", *argv], env=env,
                              capture_output=True, text=True, timeout=300)
        after.append([done.returncode, done.stdout, done.stderr])
    Path(manifest["out"]).write_text(json.dumps({"jobs": results, "after": after}))


if __name__ == "__main__":
    main()
