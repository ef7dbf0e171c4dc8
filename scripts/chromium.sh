#!/usr/bin/env bash
# Debian's Chromium for the status page's browser test (tests_py/test_report.py).
#
#   scripts/chromium.sh install   install the package if it is missing (apt-get update first)
#   scripts/chromium.sh missing   print the package's name if it is missing (scripts/packages.sh)
#
# The test drives /usr/bin/chromium headless (--dump-dom, --screenshot); nothing is downloaded
# besides the Debian package. Idempotent: a second run installs nothing.
set -euo pipefail

say() { echo "chromium.sh: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

installed() { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }

case "${1:-install}" in
    missing)
        if ! installed && command -v apt-get >/dev/null; then
            echo chromium
        fi
        ;;
    install)
        if installed; then
            exit 0
        fi
        if ! command -v apt-get >/dev/null; then
            say "not Debian: install Chromium yourself (or set CHROMIUM=/path/to/chrome)"
            exit 0
        fi
        say "installing chromium"
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get update -qq >&2
        as_root apt-get install -y -qq --no-install-recommends chromium >&2
        ;;
    *)
        say "usage: scripts/chromium.sh install|missing"
        exit 2
        ;;
esac
