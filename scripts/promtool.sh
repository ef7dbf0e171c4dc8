#!/usr/bin/env bash
# Debian's Prometheus for promtool, which the metrics test runs (tests_py/test_metrics.py):
# `promtool check metrics` on tickq's output and `promtool test rules` on
# examples/prometheus/tickq.rules.yml.
#
#   scripts/promtool.sh install   install the package if promtool is missing (apt-get update first)
#   scripts/promtool.sh missing   print the package's name if it is missing (scripts/packages.sh)
#
# Nothing is downloaded besides the Debian package; the Prometheus server it also ships is not
# started. Idempotent: a second run installs nothing.
set -euo pipefail

say() { echo "promtool.sh: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

case "${1:-install}" in
    missing)
        if ! command -v promtool >/dev/null && command -v apt-get >/dev/null; then
            echo prometheus
        fi
        ;;
    install)
        if command -v promtool >/dev/null; then
            exit 0
        fi
        if ! command -v apt-get >/dev/null; then
            say "not Debian: install Prometheus's promtool yourself"
            exit 0
        fi
        say "installing prometheus (for promtool)"
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get update -qq >&2
        as_root apt-get install -y -qq --no-install-recommends prometheus >&2
        ;;
    *)
        say "usage: scripts/promtool.sh install|missing"
        exit 2
        ;;
esac
