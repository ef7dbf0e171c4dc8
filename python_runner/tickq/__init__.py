"""tickq: a Postgres-backed recurring job scheduler."""

__version__ = "0.1.0"
