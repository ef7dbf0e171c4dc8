#!/usr/bin/env bash
# Every Debian package the tests use, installed in one apt-get call: what scripts/pg15.sh
# (PostgreSQL 15, pgTAP, pg_prove, plpgsql_check, PgBouncer, iproute2), scripts/chromium.sh,
# scripts/promtool.sh and scripts/systemd-tools.sh each find missing. Nothing is run when nothing
# is missing.
#
#   scripts/packages.sh install
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

say() { echo "packages.sh: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

case "${1:-install}" in
    install)
        missing=()
        for script in pg15.sh chromium.sh promtool.sh systemd-tools.sh; do
            mapfile -t -O "${#missing[@]}" missing < <("./$script" missing)
        done
        if [ "${#missing[@]}" -eq 0 ]; then
            exit 0
        fi
        if ! command -v apt-get >/dev/null; then
            say "not Debian: install ${missing[*]} yourself"
            exit 0
        fi
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get update -qq >&2
        as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
        ;;
    *)
        say "usage: scripts/packages.sh install"
        exit 2
        ;;
esac
