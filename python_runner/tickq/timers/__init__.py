"""The OS timers that wake `tickq tick`: launchd, systemd, cron."""
