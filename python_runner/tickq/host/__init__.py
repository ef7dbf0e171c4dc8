"""This machine, no database: processes under a watchdog, their descendants, the ledger of
running command groups, the spool of results kept through an outage, where a command starts."""
