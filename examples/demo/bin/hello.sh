#!/bin/sh
echo "hello from run $TICKQ_RUN_ID of $TICKQ_KIND"
