#!/usr/bin/env bash
# Debian's systemd package for `systemd-analyze`, which the legacy import tests use as an
# independent reference (tests_py/test_legacy_systemd*.py): `systemd-analyze calendar` computes
# the elapses of any OnCalendar= expression and `systemd-analyze verify` checks that a unit
# parses. Neither needs systemd as PID 1, and installing the package starts nothing here.
#
#   scripts/systemd-tools.sh install   install the package if systemd-analyze is missing
#   scripts/systemd-tools.sh missing   print the package's name if it is missing
#                                      (scripts/packages.sh)
#
# Idempotent: a second run installs nothing.
set -euo pipefail

say() { echo "systemd-tools.sh: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

case "${1:-install}" in
    missing)
        if ! command -v systemd-analyze >/dev/null && command -v apt-get >/dev/null; then
            echo systemd
        fi
        ;;
    install)
        if command -v systemd-analyze >/dev/null; then
            exit 0
        fi
        if ! command -v apt-get >/dev/null; then
            say "not Debian: install systemd (for systemd-analyze) yourself"
            exit 0
        fi
        say "installing systemd (for systemd-analyze)"
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get update -qq >&2
        as_root apt-get install -y -qq --no-install-recommends systemd >&2
        ;;
    *)
        say "usage: scripts/systemd-tools.sh install|missing"
        exit 2
        ;;
esac
