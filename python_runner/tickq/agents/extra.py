"""Whether this Python can run agents: the model client needs httpx, which only the optional
extra `agents` installs. A plain install (`pip install -e .`) lacks it; every place that meets
that says so in one line that names the pip command for this interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

# A checkout installs with `pip install -e .`: its root holds the pyproject.toml of tickq.
_CHECKOUT = Path(__file__).resolve().parents[3]


def install_command() -> str:
    """The pip command that adds the agents extra to the Python running this tickq."""
    pip = f"{sys.executable} -m pip install"
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "python_runner").is_dir():
        return f"{pip} -e '{_CHECKOUT}[agents]'"
    return f"{pip} 'tickq[agents]'"


def missing() -> str | None:
    """None when agents can run on this Python, else the one line that says what to install."""
    try:
        import httpx  # noqa: F401
    except ImportError:
        return (f"agents need httpx (tickq's agents extra), which {sys.executable} cannot "
                f"import: {install_command()}")
    return None
