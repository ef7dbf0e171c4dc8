#!/bin/bash
# The hourly orchestrator: launchd starts it at minute 0 of every hour and it runs every step in
# order. Since June (an unbounded Slack sweep ran for 11 hours and every source went stale
# overnight) each step has a watchdog: 25 minutes, 30 for the Slack sweep.
set -u
cd "$(dirname "$0")"

# The ordered core: Salesforce first, then the ingest that reads what it pulled.
#tickq:core/sf_pull_accounts# timeout 25m bin/sf pull accounts
#tickq:core/sf_pull_opportunities# timeout 25m bin/sf pull opportunities
#tickq:core/sf_pull_contacts# timeout 25m bin/sf pull contacts
#tickq:core/sf_pull_invoices# timeout 25m bin/sf pull invoices
#tickq:core/ingest_load# cd ingest && timeout 25m ../bin/ingest load --source salesforce
#tickq:core/ingest_dedupe# INGEST_MODE=hourly timeout 25m bin/ingest dedupe
#tickq:core/ingest_enrich# timeout 25m bin/ingest enrich
#tickq:core/ingest_publish# timeout 25m bin/ingest publish --to warehouse

# The Slack sweep gets its own, longer watchdog.
#tickq:slack_sweep# timeout 30m bin/slack sweep --channels all

# Everything else, one independent step each.
#tickq:stripe_sync# timeout 25m bin/stripe sync
#tickq:hubspot_sync# timeout 25m bin/hubspot sync
#tickq:zendesk_pull_tickets# timeout 25m bin/zendesk pull tickets
#tickq:gmail_sync# timeout 25m bin/gmail sync
#tickq:calendar_sync# timeout 25m bin/calendar sync
#tickq:notion_export# timeout 25m bin/notion export
#tickq:github_sync# timeout 25m bin/github sync --org acme
#tickq:linear_sync# timeout 25m bin/linear sync
#tickq:intercom_pull_conversations# timeout 25m bin/intercom pull conversations
#tickq:metrics_rollup_hourly# timeout 25m bin/metrics rollup hourly
#tickq:report_revenue# timeout 25m bin/report revenue --format html
#tickq:report_pipeline# timeout 25m bin/report pipeline
#tickq:dashboard_refresh# timeout 25m bin/dashboard refresh
#tickq:backup_snapshot_db# timeout 25m bin/backup snapshot db || true
#tickq:prune_tmp# timeout 25m bin/prune tmp --older-than 7d
#tickq:health_ping# timeout 25m bin/health ping
#tickq:forecast_update# timeout 25m bin/forecast update
#tickq:churn_score# timeout 25m bin/churn score
#tickq:search_reindex# LOG_LEVEL=warn timeout 25m bin/search reindex "customer notes"
#tickq:email_queue_flush# timeout 25m bin/email queue flush
#tickq:invoices_reconcile# timeout 25m bin/invoices reconcile

# Irreversible lanes: kept commented, run by hand when someone has checked the numbers.
#tickq:payout_run# # timeout 10m bin/payout run --live
#tickq:email_blast# # timeout 25m bin/email blast --all-customers

echo "orchestrator done at $(date)" >> orchestrator.log
