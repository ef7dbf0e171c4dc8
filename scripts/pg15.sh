#!/usr/bin/env bash
# Debian's PostgreSQL 15 with pgTAP, pg_prove and plpgsql_check, for the tests: always a cluster
# of the test run's own, never one the machine already has.
#
#   scripts/pg15.sh install         install the Debian packages that are missing (apt-get update
#                                   first)
#   scripts/pg15.sh missing         print the names of those missing, one a line (for
#                                   scripts/packages.sh, which installs every test's at once)
#   scripts/pg15.sh url             install; start the test run's private cluster unless it runs;
#                                   print its URL (a superuser, `postgres`, over its own socket)
#   scripts/pg15.sh stop            stop the private cluster and remove its folder
#   scripts/pg15.sh run -- CMD...   run CMD with a private cluster folder of its own; when CMD
#                                   ends (or this script is interrupted or terminated), stop the
#                                   cluster and remove the folder. Inside another `run`: just CMD.
#
# The cluster lives in $TICKQ_PG15_DIR (`run` and the pytest session set it; a shell without it
# gets ${TMPDIR:-/tmp}/tickq-pg15-<uid>): its data folder, its Unix socket and its log, in a
# folder of mode 0700 owned by the user who runs the server (as root: `postgres`, through
# `runuser`, since PostgreSQL refuses root). Its programs are Debian's PostgreSQL 15 binaries
# (/usr/lib/postgresql/15/bin); it is made by initdb, not pg_createcluster, so no file under
# /etc/postgresql, /var/lib/postgresql or /var/run/postgresql is written and no cluster of the
# machine (pg_lsclusters) is started, created or connected to. It listens on its socket and on
# 127.0.0.1 at a free port: trust over the socket (no one else can reach that folder),
# scram-sha-256 over TCP (no role has a password until a test gives one). Only the URL goes to
# stdout; progress goes to stderr. A folder is removed only if it is empty or holds the mark this
# script leaves in each folder it uses.
set -euo pipefail

PG_VERSION=15
BIN="/usr/lib/postgresql/${PG_VERSION}/bin"
MARK=".tickq-pg15"
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

missing_packages() {  # those of PACKAGES dpkg does not have installed, one a line
    local pkg
    for pkg in "${PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            echo "$pkg"
        fi
    done
}

install_packages() {
    local missing=()
    if ! command -v dpkg-query >/dev/null; then
        say "not Debian: install PostgreSQL 15, pgTAP, pg_prove and plpgsql_check yourself"
        return 0
    fi
    mapfile -t missing < <(missing_packages)
    if [ "${#missing[@]}" -eq 0 ]; then
        return 0
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq >&2
    as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# ---------------------------------------------------------------- the private cluster

cluster_dir() {
    echo "${TICKQ_PG15_DIR:-${TMPDIR:-/tmp}/tickq-pg15-$(id -u)}"
}

server_user() {  # who runs the server: postgres as root, else the caller
    if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

as_server() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

ours_or_empty() {  # the folder holds our mark, or nothing at all
    local dir="$1"
    [ -e "$dir/$MARK" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ]
}

running_pid() {  # the postmaster's pid when it runs, else nothing
    local pidfile="$1/data/postmaster.pid" pid
    [ -f "$pidfile" ] || return 0
    pid="$(head -n 1 "$pidfile")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

init_cluster() {
    local dir="$1"
    say "creating a private PostgreSQL ${PG_VERSION} cluster in $dir"
    as_server "$BIN/initdb" -D "$dir/data" -U postgres --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --no-sync >/dev/null 9>&-
}

start_cluster() {
    local dir="$1" port attempt
    for attempt in 1 2 3; do
        port="$(free_port)"
        # fsync off: nothing of a test run's cluster must outlive a crash of the machine.
        if as_server "$BIN/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/log" -o \
            "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir \
             -c fsync=off -c full_page_writes=off -c synchronous_commit=off" start >&2 9>&-; then
            echo "$port" >"$dir/port"
            return 0
        fi
        say "could not start on port $port (attempt $attempt)"
    done
    return 1
}

ensure_cluster() {  # the private cluster runs; prints its URL
    local dir
    dir="$(cluster_dir)"
    mkdir -p "$dir"
    local owner
    owner="$(stat -c %U -- "$dir")"
    if [ -L "$dir" ] || { [ "$owner" != "$(id -un)" ] && [ "$owner" != "$(server_user)" ]; }; then
        say "$dir is a link or someone else's ($owner): set TICKQ_PG15_DIR elsewhere"
        exit 2
    fi
    if ! ours_or_empty "$dir"; then
        say "$dir is not a folder of this script (no $MARK in it): set TICKQ_PG15_DIR elsewhere"
        exit 2
    fi
    touch "$dir/$MARK"
    chown "$(server_user)" "$dir" "$dir/$MARK"
    chmod 0700 "$dir"
    exec 9>>"$dir/$MARK"
    flock 9  # one start at a time (fd 9 is closed for the server: it must not hold the lock)
    [ -f "$dir/data/PG_VERSION" ] || init_cluster "$dir"
    [ -n "$(running_pid "$dir")" ] || start_cluster "$dir"
    echo "postgresql://postgres@/postgres?host=${dir}&port=$(cat "$dir/port")"
}

stop_cluster() {
    local dir pid
    dir="$(cluster_dir)"
    [ -d "$dir" ] || return 0
    if ! ours_or_empty "$dir"; then
        say "$dir is not a folder of this script (no $MARK in it): left as it is"
        return 1
    fi
    pid="$(running_pid "$dir")"
    if [ -n "$pid" ]; then
        as_server "$BIN/pg_ctl" -D "$dir/data" -w -t 30 -m immediate stop >/dev/null 2>&1 \
            || kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf -- "$dir"
}

# ---------------------------------------------------------------- run -- CMD

run_with_cluster() {
    if [ -n "${TICKQ_PG15_DIR:-}" ]; then
        exec "$@"  # an outer `run` owns the cluster
    fi
    TICKQ_PG15_DIR="$(mktemp -d "${TMPDIR:-/tmp}/tickq-pg15.XXXXXX")"
    export TICKQ_PG15_DIR
    touch "$TICKQ_PG15_DIR/$MARK"
    local child status=0
    trap 'stop_cluster' EXIT
    # Without job control a command started with & ignores SIGINT: give it back its default, so
    # ^C (sent to the whole process group) reaches it as it would in the foreground.
    env --default-signal=INT,QUIT "$@" <&0 &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null || true' TERM
    trap 'kill -HUP "$child" 2>/dev/null || true' HUP
    trap ':' INT  # the command got the same ^C; its end ends this script
    while :; do
        wait "$child" && status=0 || status=$?
        kill -0 "$child" 2>/dev/null || break  # else a signal interrupted the wait
    done
    exit "$status"
}

main() {
    local cmd="${1:-url}"
    case "$cmd" in
        install)
            install_packages
            ;;
        missing)
            if command -v dpkg-query >/dev/null; then missing_packages; fi
            ;;
        url)
            install_packages
            ensure_cluster
            ;;
        stop)
            stop_cluster
            ;;
        run)
            shift
            [ "${1:-}" = "--" ] && shift
            if [ "$#" -eq 0 ]; then
                say "usage: $0 run -- COMMAND [ARG...]"
                exit 2
            fi
            run_with_cluster "$@"
            ;;
        *)
            say "usage: $0 install|missing|url|stop|run -- COMMAND"
            exit 2
            ;;
    esac
}

main "$@"
