# tickq: `make test` is what CI runs (.ci/run). Everything installs itself from a fresh clone.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PY_DIRS := $(wildcard python_runner tests_py tests_sql bench docs/gen)
SQL_DIRS := $(wildcard sql tests_sql)

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: venv lint test-sql test-sql-15 test-py test demo packages pg15-packages browser promtool \
    systemd-tools docs docs-reference

# pytest's workers (pytest-xdist): most tests wait on subprocesses and servers, not on a core, so
# more workers than cores pay; each worker starts its own embedded PostgreSQL (tests_py/conftest.py).
PYTEST_WORKERS ?= 4

venv: $(STAMP)

# Re-installed only when pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet -e '.[dev]'
	touch $@

lint: venv
	$(VENV)/bin/ruff check $(PY_DIRS)
	$(VENV)/bin/sqlfluff lint --processes 0 $(SQL_DIRS)  # 0: every core

# Every Debian package the tests use, in one apt-get call (nothing when none is missing).
packages:
	scripts/packages.sh install

# pgTAP's extension files and pg_prove come from Debian's packages, also for the embedded server.
pg15-packages:
	scripts/pg15.sh install

# pgTAP tests on the embedded PostgreSQL 18 (the one tickq uses without DATABASE_URL).
test-sql: venv packages
	$(VPY) tests_sql/run_pgtap.py

# pgTAP tests and plpgsql_check on Debian's PostgreSQL 15: a cluster of this run's own, started
# by scripts/pg15.sh and removed when the recipe ends (in `make test`, when the whole run ends).
test-sql-15: venv packages
	scripts/pg15.sh run -- bash -c '$(VPY) tests_sql/run_pgtap.py \
	    --database-url "$$(scripts/pg15.sh url)" --plpgsql-check'

# Debian's Chromium, for the status page's browser test.
browser:
	scripts/chromium.sh install

# Debian's Prometheus, for promtool: the metrics test checks the format and the shipped rules.
promtool:
	scripts/promtool.sh install

# Debian's systemd, for systemd-analyze: the legacy import tests' reference for timer units.
systemd-tools:
	scripts/systemd-tools.sh install

# Tests marked `alone` (live ticks measured against the simulator) run after the workers, when
# the other stages have ended too: four workers on two cores would make their timing noise.
test-py: venv packages
	$(VPY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup -m "not alone"
	$(VPY) -m pytest -q -m alone

# One private PostgreSQL 15 cluster for the whole run (test-sql-15 and the pytest modules that
# ask scripts/pg15.sh for its URL), stopped and removed however the run ends: no test touches a
# cluster the machine already has. The five stages run at once (each one's output printed whole
# when it ends); the packages are installed before, once.
test: venv packages
	scripts/reachable.sh check
	scripts/pg15.sh run -- $(MAKE) --no-print-directory -j5 --output-sync=target \
	    lint docs test-sql test-sql-15 test-py

demo: venv
	$(VENV)/bin/tickq demo

# The docs site (mkdocs.yml) into site/: strict, so a broken link, a missing page or a page left
# out of the nav fails. Read it at site/index.html, or live with `.venv/bin/mkdocs serve`.
# Never --quiet: it hides the warnings from the counter --strict aborts on, and the build passes.
# MKDOCS_CONFIG is for tests_py/test_docs_build.py, which builds broken sites with this recipe.
MKDOCS_CONFIG ?= mkdocs.yml
docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --config-file $(MKDOCS_CONFIG)


# Rewrite the generated reference pages (docs/reference/) from the sources that own each fact;
# tests_py/test_docs_reference.py fails while a committed page differs from what this writes.
docs-reference: venv
	$(VPY) docs/gen/reference.py
