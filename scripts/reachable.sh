#!/usr/bin/env bash
# The tests run programs as other users (PostgreSQL's `postgres`, a timer unit's user, a new
# user of test_new_user): each must reach this checkout and its .venv, so every folder above
# the checkout must let them pass (search permission, x; not read, so nothing is listed), for
# its group too: a test that starts a program as another user keeps root's group (gid 0), and
# then the folder's group bits decide.
#
#   scripts/reachable.sh check   exit 2, naming the folder and the fix, if one does not
#   scripts/reachable.sh grant   as root in CI (.ci/run, a machine of its own): add go+x to the
#                                folders above the checkout that lack it, each named
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
closed=()
dir="$here"
while [ "$dir" != "/" ]; do
    if [ $(( 0$(stat -c %a -- "$dir") & 011 )) -ne $(( 011 )) ]; then
        closed+=("$dir")
    fi
    dir="$(dirname "$dir")"
done
[ "${#closed[@]}" -eq 0 ] && exit 0

case "${1:-check}" in
    check)
        for d in "${closed[@]}"; do
            echo "reachable.sh: $d is mode $(stat -c %a -- "$d"): the tests' other users" \
                "(postgres, a timer's user) cannot reach this checkout; clone it elsewhere" \
                "or run: chmod go+x $d" >&2
        done
        exit 2
        ;;
    grant)
        for d in "${closed[@]}"; do
            echo "reachable.sh: chmod go+x $d (search only) so the tests' other users reach $here" >&2
            chmod go+x -- "$d"
        done
        ;;
    *)
        echo "usage: $0 check|grant" >&2
        exit 2
        ;;
esac
