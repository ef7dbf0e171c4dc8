"""tickq.digest's SHA-256 is hashlib's: the names derived from it (the embedded server's
socket folder, a queue's database, the caches' keys) stay what existing installs have."""

from __future__ import annotations

import hashlib

import pytest

from tickq.digest import sha256


@pytest.mark.parametrize(
    "data", [b"", b"/var/lib/tickq/pg", "Zürich/registry".encode(), b"x" * 70_001])
def test_the_same_digest_as_hashlib(data: bytes) -> None:
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    grown = sha256()
    for at in range(0, len(data), 64):
        grown.update(data[at:at + 64])
    assert grown.digest() == hashlib.sha256(data).digest()


def test_not_openssl_s() -> None:
    """The point of the module: where CPython has its own SHA-256, that is the one used."""
    assert type(sha256()).__module__ in {"_sha2", "_sha256"}
