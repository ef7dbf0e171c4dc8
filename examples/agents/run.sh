#!/bin/sh
# The agents example end to end: the fake model server, one agent added, run through the
# queue, its transcript shown. Uses $DATABASE_URL if set, else tickq's embedded PostgreSQL.
# Needs tickq installed with its agents extra (pip install 'tickq[agents]', or make venv).
set -eu
cd "$(dirname "$0")"
TICKQ=${TICKQ:-tickq}
bin/fake-model-server &
server=$!
trap 'kill $server' EXIT
sleep 1
$TICKQ agent remove notes-digest >/dev/null 2>&1 || true
echo "Summarise what the notes say about Acme" |
    $TICKQ agent add notes-digest --prompt - --at 07:30 --on mon-fri \
        --timezone America/Chicago --tools search_notes --owner ana
echo
echo "# tickq agent run notes-digest"
$TICKQ agent run notes-digest
echo
echo "# tickq agent history notes-digest"
$TICKQ agent history notes-digest
run=$($TICKQ agent history notes-digest --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
echo
echo "# tickq agent history notes-digest --run $run"
$TICKQ agent history notes-digest --run "$run"
echo
echo "# delivered.jsonl"
tail -n 2 delivered.jsonl
