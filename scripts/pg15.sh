#!/usr/bin/env bash
# Debian's PostgreSQL 15 with pgTAP, pg_prove and plpgsql_check, for `make test-sql-15`.
#
#   scripts/pg15.sh install   install the Debian packages that are missing (apt-get update first)
#   scripts/pg15.sh url       install, start cluster 15/main, ensure a superuser role named
#                             after the calling OS user, print a DATABASE_URL (the default)
#
# Auth: Debian's pg_hba.conf has `local all all peer`, so the OS user `root` may connect over the
# Unix socket as the database role `root`. The script creates that role (SUPERUSER LOGIN) once,
# through `runuser -u postgres -- psql`, and prints
#   postgresql://root@/postgres?host=/var/run/postgresql&port=5432
# No password is set or stored. Only the URL goes to stdout; progress goes to stderr.
# Idempotent: a second run installs nothing, starts nothing and changes nothing.
set -euo pipefail

PG_VERSION=15
CLUSTER=main
SOCKET_DIR=/var/run/postgresql
PACKAGES=(
    "postgresql-${PG_VERSION}"
    "postgresql-${PG_VERSION}-pgtap"
    libtap-parser-sourcehandler-pgtap-perl
    "postgresql-${PG_VERSION}-plpgsql-check"
    iproute2  # `ip netns`: tests_py/test_hosts.py makes its dispatcher hosts with it
    pgbouncer  # tests_py/test_pgbouncer.py puts one in front of this server
)

say() { echo "pg15.sh: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
    local missing=() pkg
    if ! command -v dpkg-query >/dev/null; then
        say "not Debian: install PostgreSQL 15, pgTAP, pg_prove and plpgsql_check yourself"
        return 0
    fi
    for pkg in "${PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        return 0
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq >&2
    as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

cluster_field() {  # cluster_field N: column N of `pg_lsclusters` for our cluster
    pg_lsclusters --no-header | awk -v v="$PG_VERSION" -v c="$CLUSTER" -v n="$1" \
        '$1 == v && $2 == c { print $n }'
}

start_cluster() {
    if [ -z "$(cluster_field 1)" ]; then
        say "creating cluster ${PG_VERSION}/${CLUSTER}"
        as_root pg_createcluster "$PG_VERSION" "$CLUSTER" >&2
    fi
    if [ "$(cluster_field 4)" != "online" ]; then
        say "starting cluster ${PG_VERSION}/${CLUSTER}"
        # pg_ctlcluster switches to the postgres user (PostgreSQL refuses to run as root).
        as_root pg_ctlcluster "$PG_VERSION" "$CLUSTER" start >&2
    fi
}

ensure_role() {
    local role="$1" port="$2"
    as_root runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -h "$SOCKET_DIR" -p "$port" \
        -d postgres -v role="$role" >&2 <<'SQL'
SELECT format('CREATE ROLE %I SUPERUSER LOGIN', :'role')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role')
\gexec
SQL
}

main() {
    local cmd="${1:-url}"
    case "$cmd" in
        install)
            install_packages
            ;;
        url)
            install_packages
            start_cluster
            local port role
            port="$(cluster_field 3)"
            role="$(id -un)"
            ensure_role "$role" "$port"
            echo "postgresql://${role}@/postgres?host=${SOCKET_DIR}&port=${port}"
            ;;
        *)
            say "usage: $0 [install|url]"
            exit 2
            ;;
    esac
}

main "$@"
