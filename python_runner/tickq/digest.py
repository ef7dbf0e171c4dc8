"""SHA-256 without loading OpenSSL: `hashlib` imports `_hashlib`, OpenSSL's bindings, whose
start-up is about 1.7 ms of every tickq process (bench/README.md, "SHA-256 without
OpenSSL"). CPython's own SHA-256 gives the same digests, so every name
derived from one (the embedded server's socket, a queue's database, the caches' keys) stays as
it was; where an interpreter is built without it, hashlib's is used.

A leaf: imports nothing of tickq, so every room may use it.
"""

from __future__ import annotations

try:
    from _sha2 import sha256  # CPython 3.12 and later
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
