SELECT lost, runs_pruned, drift_pruned, alerts_pruned FROM tickq.housekeeping()
