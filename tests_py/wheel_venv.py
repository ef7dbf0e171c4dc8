"""This checkout as a user installs it: a wheel built from a copy of the sources, installed (not
editable) by pip into a venv of its own outside the checkout.

- The wheel is built by the build backend pyproject.toml names, from a copy of the files a clone
  has (so no `build/` folder left by an earlier build can slip a file in), in this Python.
- The venv is made without pip; this Python's pip installs the wheel into it (`pip --python`).
- Its dependencies are not downloaded again: a folder beside the venv holds links to the
  installed distributions the wheel's `Requires-Dist` lines need (markers and extras evaluated,
  followed to their own requirements), and only those, through a .pth file. An import of a
  package the wheel does not declare fails there as it would for a user.
- A probe (tickq_test_audit.py, loaded by a .pth file) records every file a Python of the venv
  opens or lists and every program it starts, one `kind<TAB>absolute path` line each, to the
  file named by TICKQ_TEST_AUDIT (nothing when it is unset).
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
# What a clone holds that the build reads: python_runner/tickq links into sql/ and examples/demo.
SOURCES = ("pyproject.toml", "README.md", "python_runner", "sql", "examples/demo")
_NOT_SOURCES = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")

BUILD = """import importlib, sys
backend = importlib.import_module(sys.argv[1])
print(backend.build_wheel(sys.argv[2]))
"""

AUDIT = r'''"""Records what this Python opens, lists and starts (tests_py/wheel_venv.py)."""
import os
import sys

_LOG = os.environ.get("TICKQ_TEST_AUDIT")


def _note(kind, path, cwd=None):
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path:
        return
    if isinstance(cwd, bytes | os.PathLike):
        cwd = os.fsdecode(os.fspath(cwd))
    full = os.path.normpath(os.path.join(cwd or os.getcwd(), path))
    os.write(_FD, f"{kind}\t{full}\n".encode(errors="surrogateescape"))


def _hook(event, args):
    try:
        if event == "open":
            _note("open", args[0])
        elif event in ("os.listdir", "os.scandir"):
            _note("list", args[0])
        elif event == "subprocess.Popen":
            executable, argv, cwd = args[0], args[1], args[2]
            program = executable or (argv if isinstance(argv, str | bytes) else argv[0])
            if os.sep in os.fsdecode(program):
                _note("exec", program, cwd)
    except Exception:  # a probe never breaks what it watches
        pass


if _LOG:
    _FD = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    sys.addaudithook(_hook)
'''


@dataclass(frozen=True)
class Venv:
    root: Path  # the venv
    wheel: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def tickq(self) -> Path:
        return self.bin / "tickq"

    @property
    def purelib(self) -> Path:
        return Path(subprocess.run(
            [str(self.bin / "python"), "-c",
             "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True).stdout.strip())

    @property
    def package(self) -> Path:
        return self.purelib / "tickq"


def copy_sources(target: Path) -> Path:
    """The files of SOURCES, copied to `target` (links kept as links)."""
    for name in SOURCES:
        source, copy = REPO / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy, symlinks=True, ignore=_NOT_SOURCES)
        else:
            shutil.copy2(source, copy)
    return target


def build_wheel(folder: Path) -> Path:
    """A wheel of this checkout, built in `folder` (the sources' copy and the wheel)."""
    sources = copy_sources(folder / "src")
    backend = tomllib.loads((sources / "pyproject.toml").read_text())["build-system"]
    done = subprocess.run([sys.executable, "-c", BUILD, backend["build-backend"], str(folder)],
                          cwd=sources, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / done.stdout.strip().splitlines()[-1]


def wheel_requirements(wheel: Path) -> list[str]:
    """The wheel's `Requires-Dist` lines, as its METADATA gives them."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(name).decode())
    return metadata.get_all("Requires-Dist") or []


def needed_distributions(requirements: list[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions that `requirements` (without extras of their own) need."""
    found: dict[str, importlib.metadata.Distribution] = {}
    seen: set[tuple[str, str]] = set()
    todo = [(text, "") for text in requirements]
    while todo:
        text, extra = todo.pop()
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        dist = importlib.metadata.distribution(requirement.name)
        key = canonicalize_name(dist.metadata["Name"])
        found[key] = dist
        for wanted in ("", *sorted(requirement.extras)):
            if (key, wanted) not in seen:
                seen.add((key, wanted))
                todo += [(r, wanted) for r in dist.requires or []]
    return list(found.values())


def link_distributions(dists: list[importlib.metadata.Distribution], folder: Path) -> None:
    """A link in `folder` to each top-level file or folder the distributions installed."""
    folder.mkdir()
    for dist in dists:
        for top in {f.parts[0] for f in dist.files or []} - {"..", "__pycache__"}:
            link = folder / top
            if not link.exists():
                link.symlink_to(Path(dist.locate_file(top)))


def install(wheel: Path, folder: Path, python: str = sys.executable) -> Venv:
    """`wheel` installed by pip into a new venv `folder/venv` of `python` (this one unless
    given: another user may need one it can run), with links to its dependencies in
    `folder/deps` and the audit probe."""
    venv = Venv(folder / "venv", wheel)
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv.root)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv.bin / "python"), "install",
         "--quiet", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    purelib = venv.purelib
    link_distributions(needed_distributions(wheel_requirements(wheel)), folder / "deps")
    (purelib / "tickq-deps.pth").write_text(f"{folder / 'deps'}\n")
    (purelib / "tickq_test_audit.py").write_text(AUDIT)
    (purelib / "tickq-test-audit.pth").write_text("import tickq_test_audit\n")
    return venv


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {n for n in archive.namelist() if not n.endswith("/")}


def package_files() -> set[str]:
    """Every file of the package as the checkout holds it (its links into sql/ and
    examples/demo followed), as `tickq/...` names, byte code left out."""
    root = REPO / "python_runner"
    names = set()
    for folder, dirs, files in os.walk(root / "tickq", followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        names |= {str(Path(folder, f).relative_to(root)) for f in files
                  if not f.endswith(".pyc")}
    return names
