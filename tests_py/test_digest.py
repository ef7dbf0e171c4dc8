"""The names tickq derives from SHA-256 (a queue's embedded database, an env value's stamp, a
kept report's queue, the embedded server's socket folder) stay what existing installs have:
each is pinned here to the value it had when these names were first released."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tickq.db import embedded
from tickq.db.embedded_install import User, client_user
from tickq.db.embedded_queue import database_name
from tickq.dispatch.kept import queue_of
from tickq.registry.model import env_digest


def test_a_registry_folder_keeps_its_embedded_database() -> None:
    assert database_name("/srv/Zürich jobs/registry.toml") == "tickq_z_rich_jobs_3ea9cfa7fa"
    assert database_name("/var/lib/tickq/registry.toml") == "tickq_tickq_361bb44027"


def test_an_env_value_keeps_its_stamp() -> None:
    assert env_digest("backup", "TOKEN", "s3cret") == (
        "sha256:a2608a4adfeaabd26578412418f2950b6b098195fba5e75c0e9eb587fa06b5fe")


def test_a_kept_report_keeps_its_queue() -> None:
    assert queue_of("postgresql://tickq@db.example/tickq") == (
        "e1873d4c89087e1b476177e7c78cd8ab13fcb26688fdc2e28148104f31fe9e2e")


def test_a_long_data_folder_keeps_its_socket_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the short folder is made here
    pgdata = Path("/var/lib/tickq-" + "x" * 100 + "/pg")
    user = User(client_user(), os.geteuid(), os.getegid())  # this user: no chown, no useradd
    folder = embedded._socket_dir(pgdata, user)
    assert folder.parent in (tmp_path, Path("/tmp"))
    assert folder.name == f"tickq-{user.uid}-7b0c08fff1bd"
