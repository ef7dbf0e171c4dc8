#!/bin/sh
# Fails on its first attempt, succeeds on the retry.
if [ "$TICKQ_ATTEMPT" -lt 2 ]; then
    echo "attempt $TICKQ_ATTEMPT: upstream refused the connection" >&2
    exit 1
fi
echo "attempt $TICKQ_ATTEMPT: fetched 42 rows"
